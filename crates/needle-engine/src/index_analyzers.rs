//! An index's own analyzers, as its settings define them (Elasticsearch's
//! `index.analysis.analyzer.NAME`): each one of the built-in analyzers
//! (`standard`, `english`, `snowball`) with its own stop words. A text field
//! names one by its `analyzer`; the one named `default` analyzes every text
//! field that names none. Custom chains of a tokenizer and filters, and the
//! other parts of `index.analysis`, are not supported yet: refused by name.
//!
//! They are kept in the schema (so in the manifest), as given:
//! `{"my_stop": {"type": "standard", "stopwords": ["the", "a"]}}`.

use std::collections::BTreeMap;

use needle_analysis::{Analyzer, AnalyzerKind, ENGLISH_STOP_WORDS};
use needle_core::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The analyzers of an index, by name.
pub type IndexAnalyzers = BTreeMap<String, AnalyzerDef>;

/// One analyzer of an index's settings: its parameters as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzerDef {
    /// The built-in analyzer it is (`type`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its stop words, replacing the built-in's: a list, `_english_` or `_none_`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopwords: Option<Value>,
    /// A `snowball` analyzer's language (`English`, the only one there is here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl AnalyzerDef {
    /// The analyzer this definition makes; `stop_words`, when given, replace its own.
    pub fn analyzer(&self, name: &str, stop_words: Option<&[String]>) -> Result<Analyzer> {
        let kind = built_in(name, &self.kind)?;
        let own = match &self.stopwords {
            Some(v) => Some(stop_list(name, v)?),
            None => None,
        };
        Ok(Analyzer::new(kind, stop_words.or(own.as_deref())))
    }

    /// Its parameters as Elasticsearch shows an index's settings: values as strings.
    fn shown(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), Value::String(self.kind.clone()));
        if let Some(words) = &self.stopwords {
            m.insert("stopwords".into(), words.clone());
        }
        if let Some(language) = &self.language {
            m.insert("language".into(), Value::String(language.clone()));
        }
        Value::Object(m)
    }
}

/// The analyzers `settings` define (nested or with dotted keys, with or
/// without the `index.` prefix; the rest of `settings` is not looked at).
/// Each is checked whole: a part of `index.analysis` Needle does not
/// support is an error naming it.
pub fn read(settings: &Value) -> Result<IndexAnalyzers> {
    let mut flat = Vec::new();
    crate::schema::flatten_settings("", settings, &mut flat);
    let mut params: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for (key, value) in flat {
        let key = key.strip_prefix("index.").unwrap_or(&key);
        let Some(rest) = key.strip_prefix("analysis.") else { continue };
        let Some((name, param)) = rest.strip_prefix("analyzer.").and_then(|r| r.rsplit_once('.')) else {
            return Err(Error::invalid(format!(
                "[index.{key}] is not supported yet by Needle: an index's analysis settings define \
                 analyzers (index.analysis.analyzer.NAME) of the built-in types"
            )));
        };
        params.entry(name.to_string()).or_default().insert(param.to_string(), value);
    }
    params.into_iter().map(|(name, p)| Ok((name.clone(), definition(&name, p)?))).collect()
}

/// The settings' `analysis` object that defines `analyzers`, as an index's settings show it.
pub fn shown(analyzers: &IndexAnalyzers) -> Value {
    let defined: Map<String, Value> = analyzers.iter().map(|(n, d)| (n.clone(), d.shown())).collect();
    serde_json::json!({"analyzer": defined})
}

/// Analyzer `name` from its parameters, checked.
fn definition(name: &str, mut p: Map<String, Value>) -> Result<AnalyzerDef> {
    let kind = match p.remove("type") {
        Some(Value::String(t)) => t,
        Some(other) => {
            return Err(Error::invalid(format!(
                "the type of analyzer [{name}] must be a string, not {other}"
            )))
        }
        None if p.contains_key("tokenizer") => return Err(custom_not_yet(name)),
        None => {
            return Err(Error::invalid(format!(
                "analyzer [{name}] must specify either an analyzer type, or a tokenizer"
            )))
        }
    };
    if kind == "custom" {
        return Err(custom_not_yet(name));
    }
    if name == "default_search" {
        return Err(Error::invalid(
            "analyzer [default_search] (a search analyzer apart from the index's) is not supported yet by Needle",
        ));
    }
    built_in(name, &kind)?;
    let stopwords = p.remove("stopwords");
    if let Some(words) = &stopwords {
        stop_list(name, words)?;
    }
    let language = match p.remove("language") {
        None => None,
        Some(Value::String(l)) if kind == "snowball" && l == "English" => Some(l),
        Some(other) => {
            return Err(Error::invalid(format!(
                "language {other} of analyzer [{name}] is not supported yet by Needle: a snowball analyzer stems English"
            )))
        }
    };
    if let Some(key) = p.keys().next() {
        return Err(Error::invalid(format!(
            "[index.analysis.analyzer.{name}.{key}] is not supported yet by Needle (type, stopwords, language)"
        )));
    }
    Ok(AnalyzerDef { kind, stopwords, language })
}

fn custom_not_yet(name: &str) -> Error {
    Error::invalid(format!(
        "analyzer [{name}]: custom analyzers (a tokenizer and filters) are not supported yet by Needle; \
         its types are standard, english and snowball"
    ))
}

/// The built-in analyzer `kind` names, for analyzer `name`.
fn built_in(name: &str, kind: &str) -> Result<AnalyzerKind> {
    match AnalyzerKind::parse(kind) {
        Some(k) if k != AnalyzerKind::Keyword => Ok(k),
        _ => Err(Error::invalid(format!(
            "Unknown analyzer type [{kind}] for [{name}] (Needle's are standard, english and snowball)"
        ))),
    }
}

/// The words a `stopwords` parameter names: a list (or one word), `_english_` or `_none_`.
fn stop_list(name: &str, v: &Value) -> Result<Vec<String>> {
    let word = |w: &Value| match w {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match v {
        Value::String(s) if s == "_english_" => Ok(ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_string()).collect()),
        Value::String(s) if s == "_none_" => Ok(Vec::new()),
        Value::String(s) if s.len() > 2 && s.starts_with('_') && s.ends_with('_') => Err(Error::invalid(format!(
            "the stop words [{s}] of analyzer [{name}] are not supported yet by Needle (_english_, _none_ or a list)"
        ))),
        Value::Array(words) => Ok(words.iter().map(word).collect()),
        Value::Object(_) => Err(Error::invalid(format!("the stop words of analyzer [{name}] must be a list"))),
        other => Ok(vec![word(other)]),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_nested_and_dotted_settings() {
        let nested = json!({"index": {"analysis": {"analyzer": {
            "default": {"type": "english"},
            "my.stop": {"type": "standard", "stopwords": ["Quick", "the"]},
        }}}, "number_of_shards": 1});
        let dotted = json!({
            "analysis.analyzer.default.type": "english",
            "index.analysis.analyzer.my.stop.type": "standard",
            "analysis.analyzer.my.stop.stopwords": ["Quick", "the"],
        });
        let (a, b) = (read(&nested).unwrap(), read(&dotted).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.keys().collect::<Vec<_>>(), ["default", "my.stop"]);
        let terms = a["my.stop"].analyzer("my.stop", None).unwrap().terms("The quick brown fox");
        assert_eq!(terms, ["brown", "fox"]);
        assert_eq!(
            a["default"].analyzer("default", None).unwrap().terms("the running foxes"),
            ["run", "fox"]
        );
        assert_eq!(
            shown(&a),
            json!({"analyzer": {"default": {"type": "english"}, "my.stop": {"type": "standard", "stopwords": ["Quick", "the"]}}})
        );
    }

    #[test]
    fn named_stop_lists() {
        let a = read(&json!({"analysis": {"analyzer": {
            "plain": {"type": "english", "stopwords": "_none_"},
            "std": {"type": "standard", "stopwords": "_english_"},
        }}}))
        .unwrap();
        assert_eq!(a["plain"].analyzer("plain", None).unwrap().terms("the dogs"), ["the", "dog"]);
        assert_eq!(a["std"].analyzer("std", None).unwrap().terms("the dogs"), ["dogs"]);
    }

    #[test]
    fn what_is_not_supported_is_refused_by_name() {
        for (settings, says) in [
            (
                json!({"analysis": {"analyzer": {"x": {"stopwords": ["a"]}}}}),
                "must specify either an analyzer type",
            ),
            (
                json!({"analysis": {"analyzer": {"x": {"type": "klingon"}}}}),
                "Unknown analyzer type [klingon] for [x]",
            ),
            (
                json!({"analysis": {"analyzer": {"x": {"type": "custom", "tokenizer": "standard"}}}}),
                "custom analyzers",
            ),
            (json!({"analysis": {"analyzer": {"x": {"tokenizer": "standard"}}}}), "custom analyzers"),
            (
                json!({"analysis": {"analyzer": {"x": {"type": "keyword"}}}}),
                "Unknown analyzer type [keyword]",
            ),
            (
                json!({"analysis": {"filter": {"f": {"type": "stop"}}}}),
                "[index.analysis.filter.f.type] is not supported yet",
            ),
            (
                json!({"analysis": {"analyzer": {"x": {"type": "english", "stem_exclusion": ["a"]}}}}),
                "stem_exclusion",
            ),
            (
                json!({"analysis": {"analyzer": {"x": {"type": "snowball", "language": "German"}}}}),
                "language",
            ),
            (
                json!({"analysis": {"analyzer": {"x": {"type": "english", "stopwords": "_french_"}}}}),
                "_french_",
            ),
            (json!({"analysis": {"analyzer": {"default_search": {"type": "english"}}}}), "default_search"),
        ] {
            let e = read(&settings).unwrap_err().to_string();
            assert!(e.contains(says), "{settings}: {e}");
        }
    }
}
