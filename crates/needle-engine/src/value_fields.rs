//! A document's doc values shown as Elasticsearch's `docvalue_fields` shows
//! them: numbers as numbers, dates as text in the format asked for (else
//! the field's own, `strict_date_optional_time` by default) in UTC, booleans as
//! `true`/`false`, keywords as text in byte order, binary values as base64
//! text without padding (as OpenSearch shows them). Read from the columns (with their in-place updates), never from the
//! stored source.

use needle_codecs::doc_values::sortable_to_double;
use needle_codecs::SegmentRead;
use needle_core::{DocId, Error, FieldId, Result};
use serde_json::Value;

use crate::date_format::DateFormat;
use crate::schema::{FieldKind, Schema};
use crate::values::base64_text;
use crate::zone::Zone;

/// A field whose doc values a search returns with each hit.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct DocValueField {
    pub field: FieldId,
    /// How a date field's values are written (`None`: the field's own format).
    pub date_format: Option<DateFormat>,
}

impl DocValueField {
    /// `field`'s values as the field shows them.
    pub fn new(field: FieldId) -> DocValueField {
        DocValueField { field, date_format: None }
    }
}

/// The values of `shown.field` in `doc` (empty when it has none).
pub(crate) fn doc_values_json(
    segment: &dyn SegmentRead,
    schema: &Schema,
    shown: &DocValueField,
    doc: DocId,
) -> Result<Vec<Value>> {
    let field = shown.field;
    let kind = schema.field(field).kind;
    let dates = match (kind, &shown.date_format) {
        (FieldKind::Date, Some(f)) => Some(f.clone()),
        (FieldKind::Date, None) => Some(schema.field(field).date_format()),
        _ => None,
    };
    let out = match kind {
        FieldKind::Text => return Err(no_values(schema, field)),
        FieldKind::Keyword => match segment.keyword_values(field) {
            Some(mut column) => {
                // In-memory ids are in order of arrival, not of the values: sorted here.
                let ids = column.ids(doc).to_vec();
                let mut terms: Vec<_> = ids.iter().map(|&id| column.term(id)).collect();
                terms.sort();
                terms.iter().map(|t| Value::String(String::from_utf8_lossy(t).into())).collect()
            }
            None => Vec::new(),
        },
        FieldKind::Binary => match segment.binary_values(field) {
            Some(mut column) => {
                column.value(doc).map(|b| Value::String(base64_text(b))).into_iter().collect()
            }
            None => Vec::new(),
        },
        FieldKind::Long | FieldKind::Double | FieldKind::Boolean | FieldKind::Date => {
            match segment.numeric_values(field) {
                Some(mut column) => {
                    column.values(doc).iter().map(|&v| value_json(kind, v, dates.as_ref())).collect()
                }
                None => Vec::new(),
            }
        }
    };
    needle_core::read_error::check()?;
    Ok(out)
}

/// Whether `field` keeps doc values to show (text fields do not).
pub(crate) fn check_field(schema: &Schema, field: FieldId) -> Result<()> {
    match schema.field(field).kind {
        FieldKind::Text => Err(no_values(schema, field)),
        _ => Ok(()),
    }
}

fn no_values(schema: &Schema, field: FieldId) -> Error {
    let name = &schema.field(field).name;
    Error::invalid_field(name, format!("field [{name}] is text: it keeps no doc values to show"))
}

fn value_json(kind: FieldKind, v: i64, dates: Option<&DateFormat>) -> Value {
    match (kind, dates) {
        (FieldKind::Date, Some(format)) => Value::String(format.format(v, Zone::UTC)),
        (FieldKind::Double, _) => {
            serde_json::Number::from_f64(sortable_to_double(v)).map_or(Value::Null, Value::Number)
        }
        (FieldKind::Boolean, _) => Value::Bool(v != 0),
        _ => Value::from(v),
    }
}
