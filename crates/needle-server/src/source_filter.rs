//! `_source` filtering: `false` (no source), a pattern or a list of them,
//! or `{"includes": [...], "excludes": [...]}`. Patterns name full dotted
//! paths (`user.name`, `user.*`, `*.id`); an object included is included
//! whole, less what excludes name.

use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::params::Params;
use crate::pattern;

#[derive(Debug, Clone, Default)]
pub struct SourceFilter {
    /// Whether hits carry their source at all.
    pub fetch: bool,
    includes: Vec<String>,
    excludes: Vec<String>,
}

impl SourceFilter {
    pub fn all() -> SourceFilter {
        SourceFilter { fetch: true, ..SourceFilter::default() }
    }

    /// The body's `_source` value.
    pub fn from_json(v: &Value) -> ApiResult<SourceFilter> {
        let strings = |v: &Value| -> ApiResult<Vec<String>> {
            match v {
                Value::String(s) => Ok(vec![s.clone()]),
                Value::Array(a) => a
                    .iter()
                    .map(|p| p.as_str().map(str::to_string))
                    .collect::<Option<_>>()
                    .ok_or_else(|| ApiError::parsing("[_source] patterns must be strings")),
                Value::Null => Ok(Vec::new()),
                other => Err(ApiError::parsing(format!("[_source] patterns must be strings, not {other}"))),
            }
        };
        match v {
            Value::Bool(fetch) => Ok(SourceFilter { fetch: *fetch, ..SourceFilter::default() }),
            Value::Object(m) => {
                let mut filter = SourceFilter::all();
                for (k, v) in m {
                    match k.as_str() {
                        "includes" | "include" => filter.includes = strings(v)?,
                        "excludes" | "exclude" => filter.excludes = strings(v)?,
                        other => {
                            return Err(ApiError::parsing(format!("Unknown key for [_source]: [{other}]")))
                        }
                    }
                }
                Ok(filter)
            }
            other => Ok(SourceFilter { includes: strings(other)?, ..SourceFilter::all() }),
        }
    }

    /// The URL's `_source`, `_source_includes` and `_source_excludes`, over `default`.
    pub fn from_params(params: &Params, default: SourceFilter) -> ApiResult<SourceFilter> {
        let list = |s: &str| s.split(',').filter(|p| !p.is_empty()).map(str::to_string).collect::<Vec<_>>();
        let mut filter = default;
        match params.get("_source") {
            None => {}
            Some("true" | "") => filter.fetch = true,
            Some("false") => filter.fetch = false,
            Some(patterns) => filter = SourceFilter { includes: list(patterns), ..SourceFilter::all() },
        }
        if let Some(p) = params.get("_source_includes") {
            filter.includes = list(p);
            filter.fetch = true;
        }
        if let Some(p) = params.get("_source_excludes") {
            filter.excludes = list(p);
            filter.fetch = true;
        }
        Ok(filter)
    }

    pub fn is_everything(&self) -> bool {
        self.fetch && self.includes.is_empty() && self.excludes.is_empty()
    }

    /// The filtered source.
    pub fn apply(&self, source: Value) -> Value {
        if self.is_everything() {
            return source;
        }
        self.keep(source, "", self.includes.is_empty()).unwrap_or_else(|| Value::Object(Map::new()))
    }

    fn keep(&self, value: Value, path: &str, included: bool) -> Option<Value> {
        match value {
            Value::Object(map) => {
                let kept: Map<String, Value> = map
                    .into_iter()
                    .filter_map(|(k, v)| {
                        let full = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                        if self.excludes.iter().any(|p| pattern::matches(p, &full)) {
                            return None;
                        }
                        let inside = included || self.includes.iter().any(|p| pattern::matches(p, &full));
                        self.keep(v, &full, inside).map(|v| (k, v))
                    })
                    .collect();
                (included || !kept.is_empty()).then_some(Value::Object(kept))
            }
            Value::Array(items) => {
                let kept: Vec<Value> =
                    items.into_iter().filter_map(|v| self.keep(v, path, included)).collect();
                (included || !kept.is_empty()).then_some(Value::Array(kept))
            }
            scalar => included.then_some(scalar),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> Value {
        json!({"title": "t", "user": {"name": "n", "id": 7, "tags": [{"k": 1, "v": 2}]}, "year": 1999})
    }

    #[test]
    fn includes_and_excludes() {
        let f = |v: Value| SourceFilter::from_json(&v).unwrap().apply(doc());
        assert_eq!(f(json!("title")), json!({"title": "t"}));
        assert_eq!(f(json!(["user.name", "year"])), json!({"user": {"name": "n"}, "year": 1999}));
        assert_eq!(f(json!("user")), json!({"user": {"name": "n", "id": 7, "tags": [{"k": 1, "v": 2}]}}));
        assert_eq!(
            f(json!({"includes": ["user.*"], "excludes": ["user.tags.v"]})),
            json!({"user": {"name": "n", "id": 7, "tags": [{"k": 1}]}})
        );
        assert_eq!(f(json!({"excludes": ["user"]})), json!({"title": "t", "year": 1999}));
        assert_eq!(f(json!("*.id")), json!({"user": {"id": 7}}));
        assert_eq!(f(json!("nothing")), json!({}));
        assert!(!SourceFilter::from_json(&json!(false)).unwrap().fetch);
        assert!(SourceFilter::from_json(&json!({"inclood": []})).is_err());
    }
}
