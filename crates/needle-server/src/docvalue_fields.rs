//! `docvalue_fields`: each hit's values of the named fields, read from the
//! index's doc values (`needle_engine::Hit::fields`), under the hit's
//! `fields` key. Entries are field names, `*` patterns, or objects with a
//! `field` and a `format` (for dates, any format `needle_engine::DateFormat`
//! reads, such as `epoch_millis` or `yyyy-MM-dd`; `use_field_mapping` or none:
//! the field's own). A name or pattern that matches no field shows nothing; one that
//! matches a text field is an error (as in Elasticsearch: text fields keep no
//! doc values); `_id` shows the hit's id.

use needle_core::FieldId;
use needle_engine::{DateFormat, DocValueField, FieldKind, Schema, ID_FIELD};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::pattern;

/// One entry of `docvalue_fields`.
#[derive(Debug, Clone)]
pub struct ValueField {
    pattern: String,
    /// The `format` asked for (`None`: the field's own).
    format: Option<String>,
}

/// The fields of one index a request shows.
pub struct Resolved {
    pub fields: Vec<DocValueField>,
    /// Whether `_id` is one of them.
    with_id: bool,
}

pub fn parse(v: &Value) -> ApiResult<Vec<ValueField>> {
    let Value::Array(entries) = v else {
        return Err(ApiError::parsing(format!("[docvalue_fields] must be an array, not {v}")));
    };
    entries.iter().map(entry).collect()
}

fn entry(v: &Value) -> ApiResult<ValueField> {
    match v {
        Value::String(s) => Ok(ValueField { pattern: s.clone(), format: None }),
        Value::Object(o) => {
            let mut out = ValueField { pattern: String::new(), format: None };
            for (key, value) in o {
                match (key.as_str(), value) {
                    ("field", Value::String(s)) => out.pattern = s.clone(),
                    ("format", Value::String(f)) if f == "use_field_mapping" => out.format = None,
                    ("format", Value::String(f)) => out.format = Some(f.clone()),
                    (k, _) => {
                        return Err(ApiError::parsing(format!(
                            "[docvalue_fields] entries take a string [field] and [format], not [{k}]: {value}"
                        )))
                    }
                }
            }
            match out.pattern.is_empty() {
                true => Err(ApiError::parsing("[docvalue_fields] entry without a [field]")),
                false => Ok(out),
            }
        }
        other => {
            Err(ApiError::parsing(format!("[docvalue_fields] entries are strings or objects, not {other}")))
        }
    }
}

/// The fields `wanted` names in `schema`.
pub fn resolve(wanted: &[ValueField], schema: &Schema) -> ApiResult<Resolved> {
    let mut out = Resolved { fields: Vec::new(), with_id: false };
    for w in wanted {
        for (id, def) in schema.fields.iter().enumerate() {
            if !pattern::matches(&w.pattern, &def.name) {
                continue;
            }
            if def.kind == FieldKind::Text {
                return Err(ApiError::illegal_argument(crate::sort::text_fielddata(&def.name)));
            }
            let id = id as FieldId;
            if id == ID_FIELD {
                out.with_id = true;
                continue;
            }
            let format = match (&w.format, def.kind) {
                (None, _) => None,
                (Some(f), FieldKind::Date) => {
                    Some(DateFormat::new(f).map_err(|e| ApiError::illegal_argument(e.to_string()))?)
                }
                (Some(f), kind) => {
                    return Err(ApiError::illegal_argument(format!(
                        "[docvalue_fields] format [{f}] is not supported yet by Needle on {} field [{}] (formats of date fields only)",
                        kind.name(),
                        def.name
                    )))
                }
            };
            match out.fields.iter_mut().find(|f| f.field == id) {
                Some(f) => f.date_format = f.date_format.take().or(format),
                None => out.fields.push(DocValueField { field: id, date_format: format }),
            }
        }
    }
    Ok(out)
}

impl Resolved {
    /// A hit's `fields` object; `None` when it has none.
    pub fn json(&self, id: &str, fields: std::collections::BTreeMap<String, Vec<Value>>) -> Option<Value> {
        let mut out = Map::new();
        if self.with_id {
            out.insert("_id".into(), Value::Array(vec![Value::String(id.to_string())]));
        }
        for (name, values) in fields {
            out.insert(name, Value::Array(values));
        }
        (!out.is_empty()).then_some(Value::Object(out))
    }
}
