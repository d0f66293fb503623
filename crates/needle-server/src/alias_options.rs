//! An alias's options, as Elasticsearch takes them: `filter`, `routing`
//! (both routings), `index_routing`, `search_routing`, `is_write_index`,
//! `is_hidden`. Read from an `add` action, a `PUT /{index}/_alias/{name}`
//! body or an index creation's `aliases`; kept in the index's settings file
//! (`catalog.rs`); shown by the alias listings as Elasticsearch shows them.
//!
//! The filter limits what a search, count or delete-by-query through the
//! alias finds (`Catalog::resolve_filtered`); the write index takes the
//! writes of an alias of several indexes (`Catalog::get`); a hidden alias is
//! not matched by wildcards. Routing is kept and shown: an index here has
//! one shard, so a routing value picks nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AliasOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_routing: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_routing: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_write_index: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_hidden: Option<bool>,
}

/// The aliases of an index, each with its options.
pub type Aliases = BTreeMap<String, AliasOptions>;

impl AliasOptions {
    /// The options of an object whose every key is one (a `PUT _alias` body,
    /// an alias of an index creation).
    pub fn from_object(options: &Map<String, Value>) -> ApiResult<Self> {
        let mut out = AliasOptions::default();
        for (key, value) in options {
            if !out.read(key, value)? {
                return Err(ApiError::illegal_argument(format!("[alias] unknown field [{key}]")));
            }
        }
        Ok(out)
    }

    /// Reads option `key` set to `value`; false when `key` names no option,
    /// an error (as Elasticsearch's parser names it) when `value` is not one.
    pub fn read(&mut self, key: &str, value: &Value) -> ApiResult<bool> {
        match key {
            "filter" => match value {
                Value::Object(_) => self.filter = Some(value.clone()),
                _ => return Err(unreadable("[filter] must be a query object")),
            },
            "routing" => {
                let routing = routing_of(key, value)?;
                self.index_routing = Some(routing.clone());
                self.search_routing = Some(routing);
            }
            "index_routing" => self.index_routing = Some(routing_of(key, value)?),
            "search_routing" => self.search_routing = Some(routing_of(key, value)?),
            "is_write_index" => self.is_write_index = Some(flag(key, value)?),
            "is_hidden" => self.is_hidden = Some(flag(key, value)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// As the alias listings show it: the options set, none when plain.
    pub fn shown(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({}))
    }

    pub fn is_plain(&self) -> bool {
        *self == AliasOptions::default()
    }
}

fn routing_of(key: &str, value: &Value) -> ApiResult<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(unreadable(format!("[{key}] must be a string"))),
    }
}

fn flag(key: &str, value: &Value) -> ApiResult<bool> {
    value.as_bool().ok_or_else(|| unreadable(format!("[{key}] must be true or false")))
}

pub(crate) fn unreadable(reason: impl Into<String>) -> ApiError {
    ApiError::bad_request("x_content_parse_exception", reason)
}

/// Aliases without options, as a cluster index's record keeps them.
pub fn plain(names: &BTreeSet<String>) -> Aliases {
    names.iter().map(|n| (n.clone(), AliasOptions::default())).collect()
}

/// A cluster index's aliases take no options yet: an error naming the
/// first one set.
pub fn none_in_cluster(options: &AliasOptions) -> ApiResult<()> {
    match options.shown().as_object().and_then(|o| o.keys().next().cloned()) {
        Some(option) => Err(ApiError::illegal_argument(format!(
            "alias option [{option}] is not supported yet by Needle on a cluster index"
        ))),
        None => Ok(()),
    }
}

/// The filter a search takes from the aliases that reached an index: any
/// of theirs (one alone as it is).
pub fn any_of(mut filters: Vec<Value>) -> Value {
    match filters.len() {
        1 => filters.remove(0),
        _ => json!({"bool": {"should": filters, "minimum_should_match": 1}}),
    }
}

/// Reads a settings file's aliases: a map of options, or (files written
/// before options) a list of names.
pub fn kept<'de, D: Deserializer<'de>>(d: D) -> Result<Aliases, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Kept {
        Names(BTreeSet<String>),
        Options(Aliases),
    }
    Ok(match Kept::deserialize(d)? {
        Kept::Names(names) => names.into_iter().map(|n| (n, AliasOptions::default())).collect(),
        Kept::Options(options) => options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_sets_both_routings_and_unknown_options_are_refused() {
        let o = AliasOptions::from_object(
            json!({"routing": 1, "filter": {"term": {"a": "b"}}}).as_object().unwrap(),
        )
        .unwrap();
        assert_eq!(
            o.shown(),
            json!({"filter": {"term": {"a": "b"}}, "index_routing": "1", "search_routing": "1"})
        );
        let e = AliasOptions::from_object(json!({"filtre": {}}).as_object().unwrap()).unwrap_err();
        assert!(e.reason.contains("[filtre]"), "{}", e.reason);
        assert!(AliasOptions::from_object(json!({"is_write_index": "yes"}).as_object().unwrap()).is_err());
    }

    #[test]
    fn settings_files_with_a_list_of_names_still_read() {
        #[derive(Deserialize)]
        struct S {
            #[serde(deserialize_with = "kept")]
            aliases: Aliases,
        }
        let old: S = serde_json::from_value(json!({"aliases": ["a", "b"]})).unwrap();
        assert_eq!(old.aliases.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert!(old.aliases.values().all(AliasOptions::is_plain));
        let new: S = serde_json::from_value(json!({"aliases": {"a": {"is_write_index": true}}})).unwrap();
        assert_eq!(new.aliases["a"].is_write_index, Some(true));
    }
}
