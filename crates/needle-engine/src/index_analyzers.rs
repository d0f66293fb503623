//! An index's own analyzers, as its settings define them (Elasticsearch's
//! `index.analysis`). A text field names one by its `analyzer`; the one
//! named `default` analyzes every text field that names none.
//!
//! - `analysis.analyzer.NAME`: a built-in analyzer (`type` `standard`,
//!   `english`, `snowball` or `stop`, with its own `stopwords`: a list,
//!   `_english_` or `_none_`; `simple`, `whitespace`), or `type: custom`: a
//!   `tokenizer` (`standard`, `whitespace`, `keyword`, `letter`,
//!   `lowercase`) and a `filter` list, applied in order.
//! - `analysis.filter.NAME`: a filter a custom analyzer names, of type
//!   `stop` (`stopwords`, `ignore_case`), `stemmer` (`language`: `english`
//!   or `porter`, `porter2`, `possessive_english`), `snowball` (`language`:
//!   `English`), `length` (`min`, `max`), `truncate` (`length`),
//!   `asciifolding`, `lowercase`, `uppercase`, `trim`, `reverse` or
//!   `apostrophe`. The built-in filters ([`PRE_BUILT_FILTERS`]) are named as
//!   they are. `_analyze` may define a tokenizer or filters in place.
//! - `analysis.normalizer.NAME`: what a keyword field's `normalizer` names
//!   (besides the built-in `lowercase`): a `filter` list of the filters that
//!   keep a value one term (`lowercase`, `uppercase`, `asciifolding`, `trim`).
//!
//! Anything else (char filters, other tokenizers and filters) is refused by
//! name: not supported yet. They are kept in the schema (so in
//! the manifest) as given: `{"analyzer": {"my_stop": {"type": "standard",
//! "stopwords": ["the", "a"]}}, "filter": {...}}`.

use std::collections::BTreeMap;

use needle_analysis::{
    Analyzer, AnalyzerKind, GramTokenizer, Grams, TokenChars, TokenFilter, Tokenizer, ENGLISH_STOP_WORDS,
};
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
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub normalizer: BTreeMap<String, Map<String, Value>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokenizer: BTreeMap<String, Map<String, Value>>,
    /// `index.max_ngram_diff`: the most an `ngram` filter's `max_gram` may
    /// exceed its `min_gram` (`None`: Elasticsearch's 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ngram_diff: Option<usize>,
}

impl IndexAnalysis {
    pub fn is_empty(&self) -> bool {
        self.analyzer.is_empty()
            && self.filter.is_empty()
            && self.normalizer.is_empty()
            && self.tokenizer.is_empty()
            && self.max_ngram_diff.is_none()
    }

    /// Normalizer `name`: these settings' own, or the built-in `lowercase`
    /// (`None`: neither). A keyword field's values and query text go through it whole.
    pub fn normalizer(&self, name: &str) -> Option<Result<Analyzer>> {
        let Some(p) = self.normalizer.get(name) else {
            return (name == "lowercase")
                .then(|| Ok(Analyzer::custom(Tokenizer::Keyword, vec![TokenFilter::Lowercase])));
        };
        let filters: Result<Vec<_>> =
            names(p.get("filter")).iter().map(|f| self.normalizing_filter(name, f)).collect();
        Some(filters.map(|filters| Analyzer::custom(Tokenizer::Keyword, filters)))
    }

    /// Filter `f` of normalizer `normalizer`, refused unless it keeps a value one term.
    fn normalizing_filter(&self, normalizer: &str, f: &str) -> Result<TokenFilter> {
        let filter = self.filter(normalizer, f)?;
        match filter {
            TokenFilter::Lowercase
            | TokenFilter::Uppercase
            | TokenFilter::AsciiFolding
            | TokenFilter::Trim => Ok(filter),
            _ => Err(Error::invalid(format!("Custom normalizer [{normalizer}] may not use filter [{f}]"))),
        }
    }

    /// Analyzer `name` of these settings (`None`: they define none of that
    /// name); `stop_words`, when given, replace a built-in type's own.
    pub fn analyzer(&self, name: &str, stop_words: Option<&[String]>) -> Option<Result<Analyzer>> {
        let params = self.analyzer.get(name)?;
        Some(self.make(name, params, stop_words))
    }

    /// An analyzer made on the spot (`_analyze`'s `tokenizer` and `filter`):
    /// the tokenizer named or defined (`keyword` when none is), then the
    /// filters named (these settings' or built-in ones) or defined in place.
    pub fn chain(&self, tokenizer: Option<&Value>, filters: Option<&Value>) -> Result<Analyzer> {
        const ANONYMOUS: &str = "_anonymous_tokenfilter";
        let tokenizer = match tokenizer {
            Some(Value::Object(p)) => {
                check_params("_anonymous_tokenizer", "tokenizer", p, tokenizer_params(p))?;
                self.configured_tokenizer("_anonymous_tokenizer", p)?
            }
            Some(t) => self.tokenizer("_analyze", Some(t))?,
            None => Tokenizer::Keyword,
        };
        let items = match filters {
            Some(Value::Array(items)) => items.clone(),
            Some(one) => vec![one.clone()],
            None => Vec::new(),
        };
        let filters = items
            .iter()
            .map(|item| match item {
                Value::Object(p) => {
                    check_params(ANONYMOUS, "filter", p, filter_params(p))?;
                    self.configured_filter(ANONYMOUS, p)
                }
                named => self.filter("_analyze", named.as_str().unwrap_or_default()),
            })
            .collect::<Result<_>>()?;
        Ok(Analyzer::custom(tokenizer, filters))
    }

    /// The `analysis` object of an index's settings, as Elasticsearch shows it.
    pub fn shown(&self) -> Value {
        let mut shown = serde_json::to_value(self).expect("analysis settings serialize");
        // An index setting of its own (`index.max_ngram_diff`), kept here because filters need it.
        shown.as_object_mut().expect("an object").remove("max_ngram_diff");
        shown
    }

    fn make(&self, name: &str, p: &Map<String, Value>, stop_words: Option<&[String]>) -> Result<Analyzer> {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or("custom");
        if kind == "custom" {
            let tokenizer = self.tokenizer(name, p.get("tokenizer"))?;
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
        match self.filter.get(f) {
            Some(p) => self.configured_filter(f, p),
            None => pre_built_filter(f).ok_or_else(|| {
                Error::invalid(format!(
                    "failed to find filter under [{f}], named by [{analyzer}] (Needle's built-in filters: {})",
                    PRE_BUILT_FILTERS.join(", ")
                ))
            }),
        }
    }

    /// Tokenizer `v` names, for analyzer `analyzer`: one these settings
    /// define, or a built-in one.
    fn tokenizer(&self, analyzer: &str, v: Option<&Value>) -> Result<Tokenizer> {
        let name = v.and_then(Value::as_str).unwrap_or_default();
        if let Some(p) = self.tokenizer.get(name) {
            return self.configured_tokenizer(name, p);
        }
        let pre_built =
            |edge| Tokenizer::Grams(GramTokenizer { edge, min: 1, max: 2, chars: TokenChars::default() });
        match name {
            "edge_ngram" => Ok(pre_built(true)),
            "ngram" => Ok(pre_built(false)),
            _ => Tokenizer::parse(name).ok_or_else(|| {
                not_yet(format!(
                    "the tokenizer [{name}] of analyzer [{analyzer}] (Needle's: standard, whitespace, keyword, \
                     letter, lowercase, ngram, edge_ngram)"
                ))
            }),
        }
    }

    /// Tokenizer `name` as its parameters `p` define it.
    fn configured_tokenizer(&self, name: &str, p: &Map<String, Value>) -> Result<Tokenizer> {
        match p.get("type").and_then(Value::as_str).unwrap_or_default() {
            "edge_ngram" | "edgeNGram" => gram_tokenizer(name, p, true, usize::MAX),
            "ngram" | "nGram" => gram_tokenizer(name, p, false, self.max_ngram_diff.unwrap_or(1)),
            kind => Tokenizer::parse(kind)
                .filter(|t| !matches!(t, Tokenizer::Grams(_)))
                .ok_or_else(|| not_yet(format!("the tokenizer type [{kind}] of tokenizer [{name}]"))),
        }
    }

    /// Filter `f` as its parameters `p` define it.
    fn configured_filter(&self, f: &str, p: &Map<String, Value>) -> Result<TokenFilter> {
        match p.get("type").and_then(Value::as_str).unwrap_or_default() {
            "edge_ngram" | "edgeNGram" => grams(f, p, true, usize::MAX),
            "ngram" | "nGram" => grams(f, p, false, self.max_ngram_diff.unwrap_or(1)),
            "asciifolding" if p.get("preserve_original").is_some_and(is_true) => {
                Ok(TokenFilter::AsciiFoldingKeepingOriginal)
            }
            _ => configured_filter(f, p),
        }
    }
}

/// The filters a custom analyzer may name without defining them.
const PRE_BUILT_FILTERS: &[&str] = &[
    "apostrophe",
    "asciifolding",
    "edge_ngram",
    "length",
    "lowercase",
    "ngram",
    "porter_stem",
    "reverse",
    "snowball",
    "stemmer",
    "stop",
    "trim",
    "truncate",
    "uppercase",
];

/// Built-in filter `name`, as Elasticsearch pre-builds it.
fn pre_built_filter(name: &str) -> Option<TokenFilter> {
    Some(match name {
        "apostrophe" => TokenFilter::Apostrophe,
        "asciifolding" => TokenFilter::AsciiFolding,
        "edge_ngram" => TokenFilter::Grams(Grams { edge: true, min: 1, max: 1, preserve_original: false }),
        "ngram" => TokenFilter::Grams(Grams { edge: false, min: 1, max: 2, preserve_original: false }),
        "length" => TokenFilter::Length { min: 0, max: i32::MAX as usize },
        "lowercase" => TokenFilter::Lowercase,
        "porter_stem" | "stemmer" => TokenFilter::PorterStem,
        "reverse" => TokenFilter::Reverse,
        "snowball" => TokenFilter::snowball_english(),
        "stop" => TokenFilter::stop(ENGLISH_STOP_WORDS, false),
        "trim" => TokenFilter::Trim,
        "truncate" => TokenFilter::Truncate(10),
        "uppercase" => TokenFilter::Uppercase,
        _ => return None,
    })
}

/// An `ngram` or `edge_ngram` filter (`edge`), its `max_gram` at most
/// `max_diff` over its `min_gram`.
fn grams(f: &str, p: &Map<String, Value>, edge: bool, max_diff: usize) -> Result<TokenFilter> {
    let (min, max) = gram_sizes(f, p, max_diff)?;
    if p.get("side").is_some_and(|s| s.as_str() != Some("front")) {
        return Err(not_yet(format!("[side] other than front of filter [{f}]")));
    }
    let preserve_original = p.get("preserve_original").is_some_and(is_true);
    Ok(TokenFilter::Grams(Grams { edge, min, max, preserve_original }))
}

/// An n-gram filter's or tokenizer's `min_gram` and `max_gram` (1 and 2
/// when not given), the second at most `max_diff` over the first.
fn gram_sizes(f: &str, p: &Map<String, Value>, max_diff: usize) -> Result<(usize, usize)> {
    let min = count_param(f, p, "min_gram", 1)?;
    let max = count_param(f, p, "max_gram", 2)?;
    if min == 0 || min > max {
        return Err(Error::invalid(format!(
            "filter [{f}]: [min_gram] must be at least 1 and at most [max_gram] ({min} and {max})"
        )));
    }
    if max - min > max_diff {
        return Err(Error::invalid(format!(
            "The difference between max_gram and min_gram in NGram Tokenizer must be less than or equal to: \
             [{max_diff}] but was [{}]. This limit can be set by changing the [index.max_ngram_diff] index level setting.",
            max - min
        )));
    }
    Ok((min, max))
}

/// Filter `f` as its parameters `p` define it (the filters that need no index setting).
fn configured_filter(f: &str, p: &Map<String, Value>) -> Result<TokenFilter> {
    let language = p.get("language").or_else(|| p.get("name")).and_then(Value::as_str);
    let kind = p.get("type").and_then(Value::as_str).unwrap_or_default();
    match kind {
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
        "length" => {
            let min = count_param(f, p, "min", 0)?;
            let max = count_param(f, p, "max", i32::MAX as usize)?;
            if min > max {
                return Err(Error::invalid("minimum length must be less than or equal to maximum length"));
            }
            Ok(TokenFilter::Length { min, max })
        }
        "truncate" => match count_param(f, p, "length", 10)? {
            0 => Err(Error::invalid(format!("length parameter must be provided for filter [{f}]"))),
            length => Ok(TokenFilter::Truncate(length)),
        },
        "snowball" => Ok(TokenFilter::snowball_english()),
        "lowercase" | "uppercase" | "asciifolding" | "trim" | "reverse" | "apostrophe" => {
            Ok(pre_built_filter(kind).expect("a pre-built filter"))
        }
        other => Err(not_yet(format!("the filter type [{other}] of filter [{f}]"))),
    }
}

/// A whole-number parameter (a number, or a string of one, as settings keep
/// it), `default` when it is not given.
fn count_param(f: &str, p: &Map<String, Value>, key: &str, default: usize) -> Result<usize> {
    let Some(v) = p.get(key) else { return Ok(default) };
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    n.and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Error::invalid(format!("[{key}] of filter [{f}] must be a whole number, not {v}")))
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
        if key == "max_ngram_diff" {
            let diff = value.as_u64().or_else(|| value.as_str().and_then(|s| s.parse().ok()));
            let diff = diff.ok_or_else(|| {
                Error::invalid(format!("failed to parse value [{value}] for setting [index.max_ngram_diff]"))
            })?;
            analysis.max_ngram_diff = Some(diff as usize);
            continue;
        }
        let Some(rest) = key.strip_prefix("analysis.") else { continue };
        let (part, rest) = rest.split_once('.').unwrap_or((rest, ""));
        let slot = match part {
            "analyzer" => &mut analysis.analyzer,
            "filter" => &mut analysis.filter,
            "normalizer" => &mut analysis.normalizer,
            "tokenizer" => &mut analysis.tokenizer,
            _ => return Err(not_yet(format!("[index.{key}]"))),
        };
        let Some((name, param)) = rest.rsplit_once('.') else {
            return Err(Error::invalid(format!("[index.{key}]: a setting of a named {part}")));
        };
        slot.entry(name.to_string()).or_default().insert(param.to_string(), shown_value(value));
    }
    for (name, p) in &analysis.tokenizer {
        check_params(name, "tokenizer", p, tokenizer_params(p))?;
        analysis.configured_tokenizer(name, p)?;
    }
    for (name, p) in &analysis.filter {
        check_params(name, "filter", p, filter_params(p))?;
        analysis.filter(name, name)?;
    }
    for (name, p) in &analysis.analyzer {
        check_analyzer(name, p)?;
        analysis.make(name, p, None)?;
    }
    for (name, p) in &analysis.normalizer {
        check_normalizer(name, p)?;
        analysis.normalizer(name).expect("a normalizer of the settings")?;
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
        Some("simple" | "whitespace") => check_params(name, "analyzer", p, &["type"]),
        Some(_) => check_params(name, "analyzer", p, &["type", "stopwords"]),
    }
}

fn check_normalizer(name: &str, p: &Map<String, Value>) -> Result<()> {
    match p.get("type").and_then(Value::as_str) {
        None | Some("custom") => {}
        Some(other) => return Err(Error::invalid(format!("Unknown normalizer type [{other}] for [{name}]"))),
    }
    match p.get("char_filter") {
        Some(Value::Array(items)) if !items.is_empty() => {
            Err(not_yet(format!("the char_filter of normalizer [{name}]")))
        }
        Some(Value::String(_)) => Err(not_yet(format!("the char_filter of normalizer [{name}]"))),
        _ => check_params(name, "normalizer", p, &["type", "filter", "char_filter"]),
    }
}

/// The parameters a filter of `p`'s type takes.
fn filter_params(p: &Map<String, Value>) -> &'static [&'static str] {
    match p.get("type").and_then(Value::as_str) {
        Some("stop") => &["type", "stopwords", "ignore_case"],
        Some("stemmer" | "snowball") => &["type", "language", "name"],
        Some("asciifolding") => &["type", "preserve_original"],
        Some("edge_ngram" | "edgeNGram") => &["type", "min_gram", "max_gram", "preserve_original", "side"],
        Some("ngram" | "nGram") => &["type", "min_gram", "max_gram", "preserve_original"],
        Some("length") => &["type", "min", "max"],
        Some("truncate") => &["type", "length"],
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

/// The parameters a tokenizer of `p`'s type takes.
fn tokenizer_params(p: &Map<String, Value>) -> &'static [&'static str] {
    match p.get("type").and_then(Value::as_str) {
        Some("edge_ngram" | "edgeNGram" | "ngram" | "nGram") => {
            &["type", "min_gram", "max_gram", "token_chars"]
        }
        _ => &["type"],
    }
}

/// An `ngram` or `edge_ngram` tokenizer (`edge`), its `max_gram` at most `max_diff` over its `min_gram`.
fn gram_tokenizer(name: &str, p: &Map<String, Value>, edge: bool, max_diff: usize) -> Result<Tokenizer> {
    let (min, max) = gram_sizes(name, p, max_diff)?;
    let classes = names(p.get("token_chars"));
    let chars = TokenChars::parse(classes.iter().map(String::as_str)).map_err(|other| {
        Error::invalid(format!(
            "Unknown token type: '{other}', must be one of [letter, digit, whitespace, punctuation, symbol] \
             (custom is not supported yet by Needle)"
        ))
    })?;
    let bound = |n: usize| {
        u16::try_from(n).map_err(|_| Error::invalid(format!("[max_gram] of [{name}] is too large")))
    };
    Ok(Tokenizer::Grams(GramTokenizer { edge, min: bound(min)?, max: bound(max)?, chars }))
}

/// The built-in analyzer `kind`, for analyzer `name`.
fn built_in(name: &str, kind: &str) -> Result<AnalyzerKind> {
    match AnalyzerKind::parse(kind) {
        Some(k) if k != AnalyzerKind::Keyword => Ok(k),
        _ => Err(Error::invalid(format!(
            "Unknown analyzer type [{kind}] for [{name}] (Needle's are standard, english, snowball, simple, \
             stop, whitespace and custom)"
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
    fn more_filters_and_tokenizers_by_name_or_defined() {
        let a = read(&json!({"analysis": {
            "analyzer": {
                "folded": {"tokenizer": "standard", "filter": ["asciifolding", "lowercase", "short", "cut"]},
                "letters": {"tokenizer": "lowercase", "filter": ["reverse"]},
                "stopped": {"type": "stop", "stopwords": ["über"]},
            },
            "filter": {
                "short": {"type": "length", "max": "6"},
                "cut": {"type": "truncate", "length": 3},
            },
        }}))
        .unwrap();
        assert_eq!(terms(&a, "folded", "Über Ærøskøbing café naïveté"), ["ube", "caf"]);
        assert_eq!(terms(&a, "letters", "Ab1cD"), ["ba", "dc"]);
        assert_eq!(terms(&a, "stopped", "Über alles"), ["alles"]);
        let chain = a.chain(
            Some(&json!({"type": "whitespace"})),
            Some(&json!(["uppercase", {"type": "truncate", "length": 2}, "cut"])),
        );
        assert_eq!(chain.unwrap().terms("abcd é"), ["AB", "É"]);
        let wide = read(&json!({"index": {"max_ngram_diff": "2", "analysis": {
            "filter": {"g": {"type": "ngram", "min_gram": 1, "max_gram": 3}, "e": {"type": "edge_ngram", "max_gram": 9}},
            "analyzer": {"grams": {"tokenizer": "whitespace", "filter": ["g"]}, "edges": {"tokenizer": "whitespace", "filter": ["e"]}},
        }}}))
        .unwrap();
        assert_eq!(terms(&wide, "grams", "abc"), ["a", "ab", "abc", "b", "bc", "c"]);
        assert_eq!(terms(&wide, "edges", "abc"), ["a", "ab", "abc"]);
        assert_eq!(wide.shown()["filter"]["g"]["type"], "ngram");
        assert!(wide.shown().get("max_ngram_diff").is_none());
        let tokenized = read(&json!({"analysis": {
            "tokenizer": {"auto": {"type": "edge_ngram", "min_gram": "2", "max_gram": "4", "token_chars": ["letter"]}},
            "analyzer": {"auto": {"tokenizer": "auto", "filter": ["lowercase"]}},
        }}))
        .unwrap();
        assert_eq!(terms(&tokenized, "auto", "Quick fox1"), ["qu", "qui", "quic", "fo", "fox"]);
        let inline = a.chain(Some(&json!({"type": "ngram", "token_chars": ["digit"]})), None).unwrap();
        assert_eq!(inline.terms("a12"), ["1", "12", "2"]);
        let bad = a.chain(None, Some(&json!([{"type": "truncate", "size": 2}]))).unwrap_err();
        assert!(bad.to_string().contains(".size]"), "{bad}");
    }

    #[test]
    fn normalizers_keep_a_value_one_term() {
        let a = read(&json!({"analysis": {
            "normalizer": {"folded": {"type": "custom", "filter": ["asciifolding", "lowercase", "tidy"]}},
            "filter": {"tidy": {"type": "trim"}},
        }}))
        .unwrap();
        let norm = |name: &str, text: &str| a.normalizer(name).unwrap().unwrap().normalize(text);
        assert_eq!(norm("folded", " Crème Brûlée "), "creme brulee");
        assert_eq!(norm("lowercase", "ÀB c"), "àb c");
        assert!(a.normalizer("other").is_none());
        for (analysis, says) in [
            (json!({"normalizer": {"n": {"filter": ["porter_stem"]}}}), "may not use filter [porter_stem]"),
            (json!({"normalizer": {"n": {"filter": ["nope"]}}}), "[nope]"),
            (json!({"normalizer": {"n": {"char_filter": ["html_strip"]}}}), "char_filter"),
            (json!({"normalizer": {"n": {"type": "odd"}}}), "Unknown normalizer type [odd]"),
        ] {
            let e = read(&json!({"analysis": analysis})).unwrap_err().to_string();
            assert!(e.contains(says), "{analysis}: {e}");
        }
    }

    #[test]
    fn what_is_not_supported_is_refused_by_name() {
        for (analysis, says) in [
            (json!({"analyzer": {"x": {"stopwords": ["a"]}}}), "must specify either an analyzer type"),
            (json!({"analyzer": {"x": {"type": "klingon"}}}), "Unknown analyzer type [klingon] for [x]"),
            (json!({"analyzer": {"x": {"type": "custom"}}}), "must be configured with a tokenizer"),
            (json!({"analyzer": {"x": {"type": "custom", "tokenizer": "pattern"}}}), "tokenizer [pattern]"),
            (json!({"analyzer": {"x": {"tokenizer": "standard", "filter": ["kstem"]}}}), "[kstem]"),
            (
                json!({"analyzer": {"x": {"tokenizer": "standard", "char_filter": ["html_strip"]}}}),
                "char_filter",
            ),
            (json!({"analyzer": {"x": {"type": "keyword"}}}), "Unknown analyzer type [keyword]"),
            (json!({"tokenizer": {"t": {"type": "pattern"}}}), "tokenizer type [pattern] of tokenizer [t]"),
            (json!({"tokenizer": {"t": {"type": "ngram", "token_chars": ["letter", "odd"]}}}), "'odd'"),
            (json!({"tokenizer": {"t": {"type": "ngram", "min_gram": 2, "max_gram": 4}}}), "max_ngram_diff"),
            (json!({"filter": {"f": {"type": "synonym"}}}), "filter type [synonym]"),
            (
                json!({"filter": {"f": {"type": "ngram", "min_gram": 1, "max_gram": 3}}}),
                "index.max_ngram_diff",
            ),
            (json!({"filter": {"f": {"type": "edge_ngram", "min_gram": 0}}}), "[min_gram]"),
            (json!({"filter": {"f": {"type": "length", "min": 3, "max": 2}}}), "minimum length"),
            (json!({"filter": {"f": {"type": "truncate", "length": "x"}}}), "whole number"),
            (json!({"analyzer": {"x": {"type": "simple", "stopwords": ["a"]}}}), "stopwords"),
            (
                json!({"filter": {"f": {"type": "stemmer", "language": "german"}}}),
                "stemmer language [german]",
            ),
            (json!({"analyzer": {"x": {"type": "english", "stem_exclusion": ["a"]}}}), "stem_exclusion"),
            (json!({"analyzer": {"x": {"type": "snowball", "language": "German"}}}), "language [German]"),
            (json!({"analyzer": {"x": {"type": "english", "stopwords": "_french_"}}}), "_french_"),
        ] {
            let e = read(&json!({"analysis": analysis})).unwrap_err().to_string();
            assert!(e.contains(says), "{analysis}: {e}");
        }
    }
}
