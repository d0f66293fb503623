//! An index's own analyzers, as its settings define them (Elasticsearch's
//! `index.analysis`). A text field names one by its `analyzer`; the one
//! named `default` analyzes every text field that names none.
//!
//! - `analysis.analyzer.NAME`: a built-in analyzer (`type` `standard`,
//!   `english` or `snowball`, with its own `stopwords`: a list, `_english_`
//!   or `_none_`), or `type: custom`: a `tokenizer` (`standard`,
//!   `whitespace`, `keyword`) and a `filter` list, applied in order.
//! - `analysis.filter.NAME`: a filter a custom analyzer names, of type
//!   `stop` (`stopwords`, `ignore_case`), `stemmer` (`language`: `english`
//!   or `porter`, `porter2`, `possessive_english`), `snowball` (`language`:
//!   `English`) or `lowercase`. The built-in filters `lowercase`, `stop`
//!   (English), `porter_stem` and `snowball` (English) are named as they are.
//!
//! Anything else (char filters, other tokenizers and filters, normalizers)
//! is refused by name: not supported yet. They are kept in the schema (so in
//! the manifest) as given: `{"analyzer": {"my_stop": {"type": "standard",
//! "stopwords": ["the", "a"]}}, "filter": {...}}`.

use std::collections::BTreeMap;

use needle_analysis::{Analyzer, AnalyzerKind, TokenFilter, Tokenizer, ENGLISH_STOP_WORDS};
use needle_core::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An index's analysis settings: its analyzers and the filters they name, by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexAnalysis {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub analyzer: BTreeMap<String, Map<String, Value>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub filter: BTreeMap<String, Map<String, Value>>,
}

impl IndexAnalysis {
    pub fn is_empty(&self) -> bool {
        self.analyzer.is_empty() && self.filter.is_empty()
    }

    /// Analyzer `name` of these settings (`None`: they define none of that
    /// name); `stop_words`, when given, replace a built-in type's own.
    pub fn analyzer(&self, name: &str, stop_words: Option<&[String]>) -> Option<Result<Analyzer>> {
        let params = self.analyzer.get(name)?;
        Some(self.make(name, params, stop_words))
    }

    /// An analyzer made on the spot (`_analyze`'s `tokenizer` and `filter`):
    /// the tokenizer named (`keyword` when none is), then the filters named,
    /// these settings' or built-in ones.
    pub fn chain(&self, tokenizer: Option<&Value>, filters: Option<&Value>) -> Result<Analyzer> {
        let inline = |v: Option<&Value>| match v {
            Some(Value::Array(items)) => items.iter().any(|i| !i.is_string()),
            Some(v) => !v.is_string(),
            None => false,
        };
        if inline(tokenizer) || inline(filters) {
            return Err(not_yet("a tokenizer or filter defined in the request".into()));
        }
        let tokenizer = match tokenizer {
            Some(t) => self::tokenizer("_analyze", Some(t))?,
            None => Tokenizer::Keyword,
        };
        let filters = names(filters).iter().map(|f| self.filter("_analyze", f)).collect::<Result<_>>()?;
        Ok(Analyzer::custom(tokenizer, filters))
    }

    /// The `analysis` object of an index's settings, as Elasticsearch shows it.
    pub fn shown(&self) -> Value {
        serde_json::to_value(self).expect("analysis settings serialize")
    }

    fn make(&self, name: &str, p: &Map<String, Value>, stop_words: Option<&[String]>) -> Result<Analyzer> {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or("custom");
        if kind == "custom" {
            let tokenizer = tokenizer(name, p.get("tokenizer"))?;
            let filters =
                names(p.get("filter")).iter().map(|f| self.filter(name, f)).collect::<Result<_>>()?;
            return Ok(Analyzer::custom(tokenizer, filters));
        }
        let kind = built_in(name, kind)?;
        let own = p.get("stopwords").map(|v| stop_list(name, v)).transpose()?;
        Ok(Analyzer::built_in(kind, stop_words.or(own.as_deref())))
    }

    /// Filter `f` of analyzer `analyzer`: one these settings define, or a built-in one.
    fn filter(&self, analyzer: &str, f: &str) -> Result<TokenFilter> {
        let Some(p) = self.filter.get(f) else {
            return match f {
                "lowercase" => Ok(TokenFilter::Lowercase),
                "stop" => Ok(TokenFilter::stop(ENGLISH_STOP_WORDS, false)),
                "porter_stem" => Ok(TokenFilter::PorterStem),
                "snowball" => Ok(TokenFilter::snowball_english()),
                _ => Err(Error::invalid(format!(
                    "failed to find filter under [{f}], named by [{analyzer}] (Needle's built-in filters: \
                     lowercase, stop, porter_stem, snowball)"
                ))),
            };
        };
        let language = p.get("language").or_else(|| p.get("name")).and_then(Value::as_str);
        match p.get("type").and_then(Value::as_str).unwrap_or_default() {
            "lowercase" => Ok(TokenFilter::Lowercase),
            "stop" => {
                let words = match p.get("stopwords") {
                    Some(v) => stop_list(f, v)?,
                    None => ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_string()).collect(),
                };
                Ok(TokenFilter::stop(&words, p.get("ignore_case").is_some_and(is_true)))
            }
            "stemmer" => match language.unwrap_or("english") {
                "english" | "porter" => Ok(TokenFilter::PorterStem),
                "porter2" => Ok(TokenFilter::snowball_english()),
                "possessive_english" => Ok(TokenFilter::EnglishPossessive),
                other => Err(not_yet(format!("the stemmer language [{other}] of filter [{f}]"))),
            },
            "snowball" => Ok(TokenFilter::snowball_english()),
            other => Err(not_yet(format!("the filter type [{other}] of filter [{f}]"))),
        }
    }
}

/// The analysis settings `settings` define (nested or with dotted keys,
/// with or without the `index.` prefix; the rest of `settings` is not looked
/// at), each analyzer made once to check it: a part Needle does not support
/// is an error naming it.
pub fn read(settings: &Value) -> Result<IndexAnalysis> {
    let mut flat = Vec::new();
    crate::schema::flatten_settings("", settings, &mut flat);
    let mut analysis = IndexAnalysis::default();
    for (key, value) in flat {
        let key = key.strip_prefix("index.").unwrap_or(&key);
        let Some(rest) = key.strip_prefix("analysis.") else { continue };
        let (part, rest) = rest.split_once('.').unwrap_or((rest, ""));
        let slot = match part {
            "analyzer" => &mut analysis.analyzer,
            "filter" => &mut analysis.filter,
            _ => return Err(not_yet(format!("[index.{key}]"))),
        };
        let Some((name, param)) = rest.rsplit_once('.') else {
            return Err(Error::invalid(format!("[index.{key}]: a setting of a named {part}")));
        };
        slot.entry(name.to_string()).or_default().insert(param.to_string(), shown_value(value));
    }
    for (name, p) in &analysis.filter {
        check_params(name, "filter", p, filter_params(p))?;
        analysis.filter(name, name)?;
    }
    for (name, p) in &analysis.analyzer {
        check_analyzer(name, p)?;
        analysis.make(name, p, None)?;
    }
    Ok(analysis)
}

/// A setting's value as Elasticsearch keeps it: a string, or a list of strings.
fn shown_value(value: Value) -> Value {
    let text = |v: Value| match v {
        Value::String(s) => Value::String(s),
        other => Value::String(other.to_string()),
    };
    match value {
        Value::Array(items) => Value::Array(items.into_iter().map(text).collect()),
        other => text(other),
    }
}

fn check_analyzer(name: &str, p: &Map<String, Value>) -> Result<()> {
    if name == "default_search" {
        return Err(not_yet("analyzer [default_search] (a search analyzer apart from the index's)".into()));
    }
    match p.get("type").and_then(Value::as_str) {
        None if !p.contains_key("tokenizer") => Err(Error::invalid(format!(
            "analyzer [{name}] must specify either an analyzer type, or a tokenizer"
        ))),
        None | Some("custom") => {
            if !p.contains_key("tokenizer") {
                return Err(Error::invalid(format!(
                    "custom analyzer [{name}] must be configured with a tokenizer"
                )));
            }
            check_params(name, "analyzer", p, &["type", "tokenizer", "filter", "position_increment_gap"])?;
            match p.get("position_increment_gap").and_then(Value::as_str) {
                None | Some("100") => Ok(()),
                Some(other) => {
                    Err(not_yet(format!("a [position_increment_gap] of {other} in analyzer [{name}]")))
                }
            }
        }
        Some("snowball") => {
            check_params(name, "analyzer", p, &["type", "stopwords", "language"])?;
            match p.get("language").and_then(Value::as_str) {
                None | Some("English") => Ok(()),
                Some(other) => {
                    Err(not_yet(format!("the language [{other}] of snowball analyzer [{name}] (English)")))
                }
            }
        }
        Some(_) => check_params(name, "analyzer", p, &["type", "stopwords"]),
    }
}

/// The parameters a filter of `p`'s type takes.
fn filter_params(p: &Map<String, Value>) -> &'static [&'static str] {
    match p.get("type").and_then(Value::as_str) {
        Some("stop") => &["type", "stopwords", "ignore_case"],
        Some("stemmer" | "snowball") => &["type", "language", "name"],
        _ => &["type"],
    }
}

/// `p` holds parameters of `known` alone.
fn check_params(name: &str, what: &str, p: &Map<String, Value>, known: &[&str]) -> Result<()> {
    match p.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(not_yet(format!("[index.analysis.{what}.{name}.{key}] ({})", known.join(", ")))),
        None => Ok(()),
    }
}

fn not_yet(what: String) -> Error {
    Error::invalid(format!("{what} is not supported yet by Needle"))
}

fn is_true(v: &Value) -> bool {
    v == &Value::Bool(true) || v.as_str() == Some("true")
}

/// A `filter` parameter's names: a list, or one name.
fn names(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => {
            items.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect()
        }
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

fn tokenizer(analyzer: &str, v: Option<&Value>) -> Result<Tokenizer> {
    let name = v.and_then(Value::as_str).unwrap_or_default();
    Tokenizer::parse(name).ok_or_else(|| {
        not_yet(format!(
            "the tokenizer [{name}] of analyzer [{analyzer}] (Needle's: standard, whitespace, keyword)"
        ))
    })
}

/// The built-in analyzer `kind`, for analyzer `name`.
fn built_in(name: &str, kind: &str) -> Result<AnalyzerKind> {
    match AnalyzerKind::parse(kind) {
        Some(k) if k != AnalyzerKind::Keyword => Ok(k),
        _ => Err(Error::invalid(format!(
            "Unknown analyzer type [{kind}] for [{name}] (Needle's are standard, english, snowball and custom)"
        ))),
    }
}

/// The words a `stopwords` parameter names: a list (or one word), `_english_` or `_none_`.
fn stop_list(name: &str, v: &Value) -> Result<Vec<String>> {
    match v {
        Value::String(s) if s == "_english_" => {
            Ok(ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_string()).collect())
        }
        Value::String(s) if s == "_none_" => Ok(Vec::new()),
        Value::String(s) if s.len() > 2 && s.starts_with('_') && s.ends_with('_') => {
            Err(not_yet(format!("the stop words [{s}] of [{name}] (_english_, _none_ or a list)")))
        }
        Value::Array(words) => Ok(words.iter().map(|w| w.as_str().unwrap_or_default().to_string()).collect()),
        Value::String(s) => Ok(vec![s.clone()]),
        _ => Err(Error::invalid(format!("the stop words of [{name}] must be a list"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn terms(a: &IndexAnalysis, name: &str, text: &str) -> Vec<String> {
        a.analyzer(name, None).unwrap().unwrap().terms(text)
    }

    #[test]
    fn reads_nested_and_dotted_settings() {
        let nested = json!({"index": {"analysis": {"analyzer": {
            "default": {"type": "english"},
            "my.stop": {"type": "standard", "stopwords": ["quick", "The"]},
        }}}, "number_of_shards": 1});
        let dotted = json!({
            "analysis.analyzer.default.type": "english",
            "index.analysis.analyzer.my.stop.type": "standard",
            "analysis.analyzer.my.stop.stopwords": ["quick", "The"],
        });
        let (a, b) = (read(&nested).unwrap(), read(&dotted).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.analyzer.keys().collect::<Vec<_>>(), ["default", "my.stop"]);
        // Stop words are compared as given with the lowercased terms, as Elasticsearch compares them.
        assert_eq!(terms(&a, "my.stop", "The quick brown fox"), ["the", "brown", "fox"]);
        assert_eq!(terms(&a, "default", "the running foxes"), ["run", "fox"]);
        assert!(a.analyzer("other", None).is_none());
        assert_eq!(
            a.shown(),
            json!({"analyzer": {"default": {"type": "english"}, "my.stop": {"type": "standard", "stopwords": ["quick", "The"]}}})
        );
    }

    #[test]
    fn named_stop_lists() {
        let a = read(&json!({"analysis": {"analyzer": {
            "plain": {"type": "english", "stopwords": "_none_"},
            "std": {"type": "standard", "stopwords": "_english_"},
        }}}))
        .unwrap();
        assert_eq!(terms(&a, "plain", "the dogs"), ["the", "dog"]);
        assert_eq!(terms(&a, "std", "the dogs"), ["dogs"]);
    }

    #[test]
    fn custom_analyzers_apply_their_filters_in_order() {
        let a = read(&json!({"analysis": {
            "analyzer": {
                "ws": {"type": "custom", "tokenizer": "whitespace", "filter": ["stop", "lowercase", "porter_stem"]},
                "mine": {"tokenizer": "standard", "filter": ["lowercase", "no_fox", "stem", "possessive"]},
                "exact": {"type": "custom", "tokenizer": "keyword", "filter": "lowercase"},
            },
            "filter": {
                "no_fox": {"type": "stop", "stopwords": ["fox"], "ignore_case": true},
                "stem": {"type": "stemmer", "language": "english"},
                "possessive": {"type": "stemmer", "language": "possessive_english"},
            },
        }}))
        .unwrap();
        // `stop` before `lowercase` keeps a capitalized stop word.
        assert_eq!(terms(&a, "ws", "The quick foxes, the end"), ["the", "quick", "foxes,", "end"]);
        assert_eq!(terms(&a, "mine", "The Fox jumped FOX's"), ["the", "jump", "fox'"]);
        assert_eq!(terms(&a, "exact", "New York"), ["new york"]);
        assert_eq!(a.analyzer("ws", None).unwrap().unwrap().normalize("Fo*"), "fo*");
    }

    #[test]
    fn what_is_not_supported_is_refused_by_name() {
        for (analysis, says) in [
            (json!({"analyzer": {"x": {"stopwords": ["a"]}}}), "must specify either an analyzer type"),
            (json!({"analyzer": {"x": {"type": "klingon"}}}), "Unknown analyzer type [klingon] for [x]"),
            (json!({"analyzer": {"x": {"type": "custom"}}}), "must be configured with a tokenizer"),
            (json!({"analyzer": {"x": {"type": "custom", "tokenizer": "ngram"}}}), "tokenizer [ngram]"),
            (
                json!({"analyzer": {"x": {"tokenizer": "standard", "filter": ["asciifolding"]}}}),
                "[asciifolding]",
            ),
            (
                json!({"analyzer": {"x": {"tokenizer": "standard", "char_filter": ["html_strip"]}}}),
                "char_filter",
            ),
            (json!({"analyzer": {"x": {"type": "keyword"}}}), "Unknown analyzer type [keyword]"),
            (
                json!({"tokenizer": {"t": {"type": "ngram"}}}),
                "[index.analysis.tokenizer.t.type] is not supported yet",
            ),
            (json!({"filter": {"f": {"type": "synonym"}}}), "filter type [synonym]"),
            (
                json!({"filter": {"f": {"type": "stemmer", "language": "german"}}}),
                "stemmer language [german]",
            ),
            (json!({"analyzer": {"x": {"type": "english", "stem_exclusion": ["a"]}}}), "stem_exclusion"),
            (json!({"analyzer": {"x": {"type": "snowball", "language": "German"}}}), "language [German]"),
            (json!({"analyzer": {"x": {"type": "english", "stopwords": "_french_"}}}), "_french_"),
            (json!({"analyzer": {"default_search": {"type": "english"}}}), "default_search"),
        ] {
            let e = read(&json!({"analysis": analysis})).unwrap_err().to_string();
            assert!(e.contains(says), "{analysis}: {e}");
        }
    }
}
