//! `GET|POST /_field_caps` and `/{index}/_field_caps` (`fields`: names and
//! `*` patterns): each matching field's type in the indexes named and
//! whether it can be searched and aggregated, as Elasticsearch answers it:
//! an entry a type, with `indices` when the indexes disagree on the type
//! (or, with `include_unmapped=true`, some lack the field: `unmapped`), and
//! `non_searchable_indices` / `non_aggregatable_indices` when they disagree
//! on those. Of the metadata fields, `_id` (searched by `ids`, not aggregated).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::response::Response;
use needle_engine::{FieldDef, FieldKind};
use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::server::{blocking, Shared};

pub async fn field_caps(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || run(&app, "_all", &call)).await
}

pub async fn field_caps_of(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || run(&app, &index, &call)).await
}

/// One index's capabilities for a field of one type.
struct Caps {
    index: String,
    searchable: bool,
    aggregatable: bool,
}

fn run(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    let p = &call.params;
    let mut patterns: Vec<String> =
        p.get("fields").unwrap_or_default().split(',').map(str::to_string).collect();
    let unmapped = p.flag("include_unmapped", false)?;
    p.ignore(&["allow_no_indices", "ignore_unavailable", "expand_wildcards"]);
    p.finish(&call.path)?;
    if let Some(body) = call.json()? {
        patterns.extend(body_fields(body)?);
    }
    patterns.retain(|f| !f.is_empty());
    if patterns.is_empty() {
        return Err(ApiError::illegal_argument("specified fields can't be null or empty"));
    }
    let mut handles = app.catalog.resolve(expression)?;
    handles.sort_by(|a, b| a.name.cmp(&b.name));
    let wanted = |name: &str| patterns.iter().any(|p| crate::pattern::matches(p, name));
    // Field -> type -> each index's capabilities.
    let mut found: BTreeMap<String, BTreeMap<&'static str, Vec<Caps>>> = BTreeMap::new();
    for h in &handles {
        for f in h.index.schema().fields.iter().filter(|f| wanted(&f.name)) {
            let (kind, searchable, aggregatable) = capabilities(f);
            let caps = Caps { index: h.name.clone(), searchable, aggregatable };
            found.entry(f.name.clone()).or_default().entry(kind).or_default().push(caps);
        }
    }
    let names: Vec<String> = handles.iter().map(|h| h.name.clone()).collect();
    let fields: Map<String, Value> =
        found.into_iter().map(|(name, types)| (name, field_json(types, &names, unmapped))).collect();
    Ok(respond::ok(&json!({"indices": names, "fields": fields})))
}

/// The `fields` of a request body; anything else in it is refused.
fn body_fields(body: Value) -> ApiResult<Vec<String>> {
    let Value::Object(body) = body else {
        return Err(ApiError::parsing("the field capabilities body must be an object"));
    };
    let mut out = Vec::new();
    for (key, value) in body {
        match (key.as_str(), value) {
            ("fields", Value::Array(items)) => {
                out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_string)))
            }
            ("fields", Value::String(s)) => out.push(s),
            ("index_filter" | "runtime_mappings", _) => {
                return Err(ApiError::illegal_argument(format!("[{key}] is not supported yet by Needle")))
            }
            (other, _) => return Err(ApiError::parsing(format!("request does not support [{other}]"))),
        }
    }
    Ok(out)
}

/// A field's type as field capabilities name it, and whether it is searchable and aggregatable.
fn capabilities(f: &FieldDef) -> (&'static str, bool, bool) {
    match f.kind {
        _ if f.name == "_id" => ("_id", true, false),
        FieldKind::Text => ("text", f.index, false),
        FieldKind::Binary => ("binary", false, false),
        kind => (kind.name(), true, true),
    }
}

/// One field's entry: a type each, and `unmapped` for the indexes without
/// it when they are asked for.
fn field_json(types: BTreeMap<&'static str, Vec<Caps>>, all: &[String], unmapped: bool) -> Value {
    let having: Vec<&str> = types.values().flatten().map(|c| c.index.as_str()).collect();
    let lacking: Vec<&String> = all.iter().filter(|n| !having.contains(&n.as_str())).collect();
    let unmapped = unmapped && !lacking.is_empty();
    let named = types.len() > 1 || unmapped;
    let mut out = Map::new();
    for (kind, caps) in types {
        let mut entry = json!({
            "type": kind,
            "searchable": caps.iter().all(|c| c.searchable),
            "aggregatable": caps.iter().all(|c| c.aggregatable),
        });
        if named {
            entry["indices"] = json!(caps.iter().map(|c| &c.index).collect::<Vec<_>>());
        }
        let not =
            |test: fn(&Caps) -> bool| caps.iter().filter(|c| !test(c)).map(|c| &c.index).collect::<Vec<_>>();
        let (unsearchable, unaggregatable) = (not(|c| c.searchable), not(|c| c.aggregatable));
        if !unsearchable.is_empty() && unsearchable.len() < caps.len() {
            entry["non_searchable_indices"] = json!(unsearchable);
        }
        if !unaggregatable.is_empty() && unaggregatable.len() < caps.len() {
            entry["non_aggregatable_indices"] = json!(unaggregatable);
        }
        out.insert(kind.to_string(), entry);
    }
    if unmapped {
        let entry =
            json!({"type": "unmapped", "searchable": false, "aggregatable": false, "indices": lacking});
        out.insert("unmapped".into(), entry);
    }
    Value::Object(out)
}
