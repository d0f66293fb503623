//! A search's `sort` (and the `search_after` values that page through it):
//! keys by field name, resolved against each index's mapping into the
//! engine's sort keys, and hits' sort values shown as Elasticsearch shows
//! them (numbers: a double's value, a date's milliseconds, a boolean's 0/1,
//! the stand-in for a missing value; keywords: the value, or null).

use std::cmp::Ordering;

use needle_engine::{column_json, missing_value, query_value, FieldKind, Schema, SortBy, SortKey, SortValue};
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};

/// One key as asked for.
#[derive(Debug, Clone)]
pub struct SortSpec {
    field: String,
    descending: bool,
    missing_first: bool,
    /// `unmapped_type` was given: an index without the field sorts every hit as missing.
    unmapped_ok: bool,
}

impl SortSpec {
    /// Whether this is the `_doc` key (index order).
    pub fn is_doc(&self) -> bool {
        self.field == "_doc"
    }

    pub fn is_descending(&self) -> bool {
        self.descending
    }

    /// How two hits' shown values of this key order them (merging the
    /// pages of a cluster's shards): numbers as numbers (a missing number
    /// shows as its stand-in, so it falls in place), strings by their
    /// bytes, a missing keyword (null) first or last as asked, in either order.
    pub fn compare_shown(&self, a: &Value, b: &Value) -> Ordering {
        let ordered = match (a, b) {
            (Value::Null, Value::Null) => return Ordering::Equal,
            (Value::Null, _) => return if self.missing_first { Ordering::Less } else { Ordering::Greater },
            (_, Value::Null) => return if self.missing_first { Ordering::Greater } else { Ordering::Less },
            (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => x.as_f64().unwrap_or(f64::NAN).total_cmp(&y.as_f64().unwrap_or(f64::NAN)),
            },
            (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
            (x, y) => x.to_string().cmp(&y.to_string()),
        };
        if self.descending {
            ordered.reverse()
        } else {
            ordered
        }
    }
}

/// The keys of a `sort` value: a name, `{"name": "asc"}`, `{"name": {"order":
/// ..., "missing": "_first"|"_last", "mode": "min"|"max", "unmapped_type": ...}}`, or a list of them.
pub fn parse(v: &Value) -> ApiResult<Vec<SortSpec>> {
    match v {
        Value::Array(items) => items.iter().map(one).collect(),
        other => Ok(vec![one(other)?]),
    }
}

/// The `sort` URL parameter: `name`, `name:desc`, comma-separated.
pub fn parse_param(s: &str) -> ApiResult<Vec<SortSpec>> {
    s.split(',')
        .map(|part| match part.split_once(':') {
            Some((field, order)) => one(&json!({ field: order })),
            None => one(&json!(part)),
        })
        .collect()
}

fn one(v: &Value) -> ApiResult<SortSpec> {
    let (field, options) = match v {
        Value::String(s) => (s.clone(), Value::Null),
        Value::Object(m) if m.len() == 1 => {
            let (f, o) = m.iter().next().expect("one key");
            (f.clone(), o.clone())
        }
        other => return Err(ApiError::parsing(format!("[sort] malformed: {other}"))),
    };
    let default_descending = field == "_score";
    let mut spec =
        SortSpec { field, descending: default_descending, missing_first: false, unmapped_ok: false };
    match options {
        Value::Null => {}
        Value::String(order) => spec.descending = order_of(&order)?,
        Value::Object(m) => {
            for (key, value) in m {
                match (key.as_str(), &value) {
                    ("order", Value::String(o)) => spec.descending = order_of(o)?,
                    ("missing", Value::String(m)) if m == "_first" || m == "_last" => spec.missing_first = m == "_first",
                    ("missing", other) => {
                        return Err(ApiError::illegal_argument(format!(
                            "[sort] [missing] {other} is not supported yet by Needle: only \"_first\" and \"_last\""
                        )))
                    }
                    ("mode", Value::String(m)) if m == "min" || m == "max" => {
                        if (m == "max") != spec.descending {
                            return Err(ApiError::illegal_argument(format!(
                                "[sort] [mode] {m} in {} order is not supported yet by Needle",
                                if spec.descending { "descending" } else { "ascending" }
                            )));
                        }
                    }
                    ("unmapped_type", _) => spec.unmapped_ok = true,
                    ("numeric_type" | "format", _) => {}
                    (other, _) => return Err(ApiError::parsing(format!("[sort] option [{other}] is not supported"))),
                }
            }
        }
        other => return Err(ApiError::parsing(format!("[sort] malformed: {other}"))),
    }
    Ok(spec)
}

fn order_of(s: &str) -> ApiResult<bool> {
    match s {
        "asc" => Ok(false),
        "desc" => Ok(true),
        other => {
            Err(ApiError::illegal_argument(format!("Unknown SortOrder [{other}]; expected asc or desc")))
        }
    }
}

/// Whether the keys are the ranking a search has anyway (by score, best first).
pub fn is_by_score(specs: &[SortSpec]) -> bool {
    specs.iter().all(|s| s.field == "_score" && s.descending) && specs.len() <= 1
}

/// The keys resolved against one index: the engine's, and each field key's type.
pub struct Resolved {
    pub keys: Vec<SortKey>,
    kinds: Vec<Option<FieldKind>>,
}

impl Resolved {
    /// Whether a hit's score is a sort key.
    pub fn by_score(&self) -> bool {
        self.keys.iter().any(|k| k.by == SortBy::Score)
    }

    /// A hit's sort values as JSON.
    pub fn json(&self, values: &[SortValue]) -> Value {
        let shown = values.iter().zip(&self.kinds).map(|(v, kind)| match (v, kind) {
            (SortValue::Int(i), Some(kind)) => column_json(*kind, *i),
            (SortValue::Int(i), None) => json!(i),
            (SortValue::Score(s), _) => crate::respond::score(*s),
            (SortValue::Doc(d), _) => json!(d),
            (SortValue::Bytes(b), _) => json!(String::from_utf8_lossy(b)),
            (SortValue::Missing, _) => Value::Null,
        });
        Value::Array(shown.collect())
    }

    /// `search_after`'s values as this index's sort values; with
    /// `leading`, fewer values than keys bound the leading keys only.
    pub fn after(&self, values: &[Value], specs: &[SortSpec], leading: bool) -> ApiResult<Vec<SortValue>> {
        if values.len() > self.keys.len() || (values.len() < self.keys.len() && !leading) {
            return Err(ApiError::illegal_argument(format!(
                "search_after has {} value(s) but sort has {}.",
                values.len(),
                self.keys.len()
            )));
        }
        let parsed =
            self.keys.iter().zip(values).zip(&self.kinds).zip(specs).map(|(((key, v), kind), spec)| {
                let bad = || {
                    ApiError::illegal_argument(format!(
                        "search_after value {v} does not fit [{}]",
                        spec.field
                    ))
                };
                Ok(match key.by {
                    SortBy::Score => SortValue::Score(v.as_f64().ok_or_else(bad)? as f32),
                    SortBy::Doc => SortValue::Doc(v.as_u64().ok_or_else(bad)?),
                    SortBy::Keyword { .. } => match v {
                        Value::Null => SortValue::Missing,
                        Value::String(s) => SortValue::Bytes(s.as_bytes().into()),
                        other => SortValue::Bytes(other.to_string().as_bytes().into()),
                    },
                    SortBy::Field { .. } => match kind {
                        Some(kind) => SortValue::Int(
                            query_value(*kind, &spec.field, v)
                                .map_err(|e| ApiError::illegal_argument(e.to_string()))?,
                        ),
                        None => SortValue::Int(v.as_i64().ok_or_else(bad)?),
                    },
                })
            });
        parsed.collect()
    }
}

/// The keys against `schema`: a field the index does not map is an error
/// unless `unmapped_type` was given (every hit then sorts as missing).
/// Elasticsearch's refusal to sort, aggregate or show doc values of text field `name`.
pub fn text_fielddata(name: &str) -> String {
    format!(
        "Text fields are not optimised for operations that require per-document field data like aggregations and \
         sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, \
         set fielddata=true on [{name}] in order to load field data by uninverting the inverted index. Note that \
         this can use significant memory."
    )
}

pub fn resolve(specs: &[SortSpec], schema: &Schema) -> ApiResult<Resolved> {
    let mut out = Resolved { keys: Vec::new(), kinds: Vec::new() };
    for spec in specs {
        let (by, kind) = match spec.field.as_str() {
            "_score" => (SortBy::Score, None),
            "_doc" => (SortBy::Doc, None),
            name => match schema.field_id(name) {
                Some(id) => {
                    let kind = schema.field(id).kind;
                    match kind {
                        FieldKind::Text => return Err(ApiError::illegal_argument(text_fielddata(name))),
                        FieldKind::Binary => {
                            return Err(ApiError::illegal_argument("can't sort on binary field"))
                        }
                        FieldKind::Keyword => {
                            let by = SortBy::Keyword { field: id, missing_first: spec.missing_first };
                            out.keys.push(SortKey { by, descending: spec.descending });
                            out.kinds.push(Some(kind));
                            continue;
                        }
                        _ => {}
                    }
                    let missing = missing_value(kind, spec.descending, spec.missing_first);
                    (SortBy::Field { field: id, missing }, Some(kind))
                }
                None if spec.unmapped_ok => {
                    let missing = missing_value(FieldKind::Long, spec.descending, spec.missing_first);
                    (SortBy::Field { field: needle_core::FieldId::MAX, missing }, None)
                }
                None => {
                    return Err(ApiError::bad_request(
                        "query_shard_exception",
                        format!("No mapping found for [{name}] in order to sort on"),
                    ))
                }
            },
        };
        out.keys.push(SortKey { by, descending: spec.descending });
        out.kinds.push(kind);
    }
    Ok(out)
}
