//! The `filter_path` parameter: a comma-separated list of dotted paths that
//! keep only those parts of a response (`hits.hits._id`, `*` within a name,
//! `**` for any depth; arrays are looked through), and `-path` to drop
//! parts (drops apply first).

use serde_json::{Map, Value};

use crate::pattern;

pub struct FilterPath {
    include: Vec<Vec<String>>,
    exclude: Vec<Vec<String>>,
}

impl FilterPath {
    pub fn parse(spec: &str) -> FilterPath {
        let (mut include, mut exclude) = (Vec::new(), Vec::new());
        for path in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match path.strip_prefix('-') {
                Some(p) => exclude.push(split(p)),
                None => include.push(split(path)),
            }
        }
        FilterPath { include, exclude }
    }

    pub fn apply(&self, mut value: Value) -> Value {
        if !self.exclude.is_empty() {
            let paths: Vec<&[String]> = self.exclude.iter().map(Vec::as_slice).collect();
            value = exclude(value, &paths).unwrap_or_else(|| Value::Object(Map::new()));
        }
        if !self.include.is_empty() {
            let paths: Vec<&[String]> = self.include.iter().map(Vec::as_slice).collect();
            value = include(value, &paths).unwrap_or_else(|| Value::Object(Map::new()));
        }
        value
    }
}

fn split(path: &str) -> Vec<String> {
    path.split('.').map(str::to_string).collect()
}

/// The paths that go on below key `key`: an empty one when a path ends there.
fn below<'a>(paths: &[&'a [String]], key: &str) -> Vec<&'a [String]> {
    let mut out = Vec::new();
    for &p in paths {
        match p.first().map(String::as_str) {
            Some("**") => {
                out.push(p); // `**` may reach deeper
                match p.get(1) {
                    None => out.push(&p[1..]),
                    Some(next) if pattern::matches(next, key) => out.push(&p[2..]),
                    Some(_) => {}
                }
            }
            Some(name) if pattern::matches(name, key) => out.push(&p[1..]),
            _ => {}
        }
    }
    out
}

/// What the paths keep of `value`; `None` when nothing.
fn include(value: Value, paths: &[&[String]]) -> Option<Value> {
    if paths.iter().any(|p| p.is_empty()) {
        return Some(value);
    }
    match value {
        Value::Object(map) => {
            let kept: Map<String, Value> = map
                .into_iter()
                .filter_map(|(k, v)| {
                    let next = below(paths, &k);
                    if next.is_empty() {
                        return None;
                    }
                    include(v, &next).map(|v| (k, v))
                })
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(items) => {
            let kept: Vec<Value> = items.into_iter().filter_map(|v| include(v, paths)).collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        _ => None,
    }
}

/// `value` without what the paths name; `None` when it goes whole.
fn exclude(value: Value, paths: &[&[String]]) -> Option<Value> {
    if paths.iter().any(|p| p.is_empty()) {
        return None;
    }
    match value {
        Value::Object(map) => Some(Value::Object(
            map.into_iter()
                .filter_map(|(k, v)| {
                    let next = below(paths, &k);
                    if next.is_empty() {
                        return Some((k, v));
                    }
                    exclude(v, &next).map(|v| (k, v))
                })
                .collect(),
        )),
        Value::Array(items) => {
            Some(Value::Array(items.into_iter().filter_map(|v| exclude(v, paths)).collect()))
        }
        other => Some(other),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn response() -> Value {
        json!({"took": 3, "hits": {"total": {"value": 2}, "hits": [
            {"_id": "a", "_score": 1.0, "_source": {"t": "x", "n": {"deep": 1}}},
            {"_id": "b", "_score": 0.5, "_source": {"t": "y"}}]}})
    }

    #[test]
    fn includes_look_through_arrays() {
        let f = FilterPath::parse("hits.hits._id,took");
        assert_eq!(f.apply(response()), json!({"took": 3, "hits": {"hits": [{"_id": "a"}, {"_id": "b"}]}}));
        let f = FilterPath::parse("hits.hits._s*");
        assert_eq!(
            f.apply(response())["hits"]["hits"][0],
            json!({"_score": 1.0, "_source": {"t": "x", "n": {"deep": 1}}})
        );
        assert_eq!(
            FilterPath::parse("**.deep").apply(response()),
            json!({"hits": {"hits": [{"_source": {"n": {"deep": 1}}}]}})
        );
        assert_eq!(FilterPath::parse("nothing").apply(response()), json!({}));
    }

    #[test]
    fn excludes_apply_first() {
        let f = FilterPath::parse("-hits.hits._source,-took");
        assert_eq!(
            f.apply(response()),
            json!({"hits": {"total": {"value": 2}, "hits": [{"_id": "a", "_score": 1.0}, {"_id": "b", "_score": 0.5}]}})
        );
        let f = FilterPath::parse("hits.hits,-hits.hits._s*");
        assert_eq!(f.apply(response()), json!({"hits": {"hits": [{"_id": "a"}, {"_id": "b"}]}}));
    }
}
