//! Field values as doc values: what a `long`, `double`, `boolean` or `date`
//! value becomes in its column (an `i64`, see `needle_codecs::doc_values`)
//! and a `binary` one (bytes, given as base64 text),
//! the bounds of a range over one, the stand-in for a missing value in a
//! sort, and a column value shown back as JSON.
//!
//! Dates are read as `date_format.rs` reads them (Elasticsearch's default
//! format, `strict_date_optional_time||epoch_millis`, unless told otherwise).

use needle_codecs::doc_values::{double_to_sortable, sortable_to_double};
use serde_json::Value;
use smol_str::{SmolStr, ToSmolStr};

use crate::date_math::DateReading;
use crate::schema::{FieldKind, Schema};
use crate::updates::{ColumnValue, FieldUpdate};
use base64::engine::{DecodePaddingMode, Engine, GeneralPurpose, GeneralPurposeConfig};
use needle_core::{Error, FieldId, Result};
use needle_search::{Query, RangeQuery};

/// The column value of a field's indexed form (its canonical string, see
/// `document::field_value`), or `None` for kinds without doc values.
pub(crate) fn column_value(kind: FieldKind, indexed: &str) -> Option<i64> {
    match kind {
        FieldKind::Long | FieldKind::Date => indexed.parse().ok(),
        FieldKind::Double => indexed.parse::<f64>().ok().map(double_to_sortable),
        FieldKind::Boolean => Some(i64::from(indexed == "true")),
        FieldKind::Text | FieldKind::Keyword | FieldKind::Binary => None,
    }
}

/// Base64 as Elasticsearch reads a binary field's value (the standard
/// alphabet, padding optional) and shows a binary doc value (no padding).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The bytes a binary field's value (base64 text) stands for, or why it is not one.
pub(crate) fn binary_value(field: &str, v: &Value) -> Result<Vec<u8>> {
    let bad = || {
        let shown = needle_core::printable(&v.to_string(), 64);
        Error::invalid_field(field, format!("field `{field}` is binary: {shown} is not base64 text"))
    };
    let Value::String(s) = v else { return Err(bad()) };
    base64_bytes(s).ok_or_else(bad)
}

/// The bytes base64 text `s` stands for.
pub fn base64_bytes(s: &str) -> Option<Vec<u8>> {
    BASE64.decode(s.as_bytes()).ok()
}

/// Bytes as base64 text without padding (how OpenSearch shows a binary doc value).
pub fn base64_text(bytes: &[u8]) -> String {
    BASE64.encode(bytes)
}

/// An update's fields and values, as [`field_updates`] takes them, from a JSON object.
pub(crate) fn named_values(values: &serde_json::Map<String, Value>) -> Vec<(&str, &Value)> {
    values.iter().map(|(field, value)| (field.as_str(), value)).collect()
}

/// The changes of an in-place update setting each field of `values` (as a
/// document would give them): only long, double and date fields are updated
/// in place (see [`is_point`]), one value each.
pub(crate) fn field_updates(schema: &Schema, values: &[(&str, &Value)]) -> Result<Vec<FieldUpdate>> {
    if values.is_empty() {
        return Err(Error::invalid("an update sets one field at least"));
    }
    values
        .iter()
        .map(|&(field, value)| {
            let (id, v) = update_value(schema, field, value)?;
            Ok((id, v, given_text(value)))
        })
        .collect()
}

/// A value as its JSON text (a whole number printed directly: every
/// in-place update of a number comes here, and the formatter's detour costs
/// more than the rest of reading it).
fn given_text(value: &Value) -> SmolStr {
    match value.as_i64() {
        Some(n) => SmolStr::new(itoa::Buffer::new().format(n)),
        None => value.to_smolstr(),
    }
}

fn update_value(schema: &Schema, field: &str, value: &Value) -> Result<(FieldId, ColumnValue)> {
    let id = in_place_field(schema, field)?;
    let kind = schema.field(id).kind;
    if kind == FieldKind::Binary {
        return Ok((id, ColumnValue::Bytes(binary_value(field, value)?.into())));
    }
    // A whole number of a long or date field is its column value as it is
    // (what reading it as a document would make of it, without the text between).
    if let (FieldKind::Long | FieldKind::Date, Some(v)) = (kind, value.as_i64()) {
        return Ok((id, ColumnValue::Number(v)));
    }
    let indexed = crate::document::field_value(schema.field(id), value)?;
    let v = column_value(kind, &indexed)
        .ok_or_else(|| Error::invalid_field(field, "not a value of the field"))?;
    Ok((id, ColumnValue::Number(v)))
}

/// The field named `field` if its values can be updated in place: a
/// mapped, indexed long, double or date field (see [`is_point`]) or a binary
/// field; else why not.
pub fn in_place_field(schema: &Schema, field: &str) -> Result<FieldId> {
    // Shown only in an error: an update's every call comes here.
    let shown = || needle_core::printable(field, 100);
    let id = schema
        .field_id(field)
        .filter(|&id| id != crate::schema::ID_FIELD)
        .ok_or_else(|| Error::invalid_field(field, format!("no field [{}] in the mapping", shown())))?;
    let def = schema.field(id);
    if schema.sort.as_ref().is_some_and(|s| s.field == def.name) {
        let reason = format!("field [{}] is the index sort: changing it re-indexes the document", shown());
        return Err(Error::invalid_field(field, reason));
    }
    if !is_point(def.kind) && def.kind != FieldKind::Binary {
        let reason = format!(
            "field [{}] is of type [{}]: only long, integer, double, float, date and binary fields are updated in place",
            shown(),
            def.kind.name()
        );
        return Err(Error::invalid_field(field, reason));
    }
    if def.multi_of.is_some() || !schema.multi_fields(id).is_empty() {
        let reason =
            format!("field [{}] has multi-fields or is one: changing it re-indexes the document", shown());
        return Err(Error::invalid_field(field, reason));
    }
    Ok(id)
}

/// Whether a field of this kind is a number to Elasticsearch (a point
/// field: long, double, date): a term query on it is an exact match on its
/// value, and its values can be updated in place. Booleans are not: they
/// are searched as terms and scored by BM25.
pub fn is_point(kind: FieldKind) -> bool {
    matches!(kind, FieldKind::Long | FieldKind::Double | FieldKind::Date)
}

/// The column value an indexed term of `field` stands for (`None` for
/// fields without a numeric column).
pub(crate) fn indexed_value(schema: &Schema, field: FieldId, term: &[u8]) -> Option<i64> {
    let kind = schema.fields.get(usize::from(field))?.kind;
    column_value(kind, std::str::from_utf8(term).ok()?)
}

/// `query` with each term query on a long, double or date field made an
/// exact match on the field's doc values, as Elasticsearch runs one (a point
/// query: a constant score), so it finds the value an in-place update set.
/// A segment written before doc values matches by the term.
pub(crate) fn numeric_terms(query: &Query, schema: &Schema) -> Query {
    let mut point_of = |leaf: Query| match leaf {
        Query::Term(t) => {
            let point = schema.fields.get(usize::from(t.field)).is_some_and(|f| is_point(f.kind));
            Ok::<_, std::convert::Infallible>(
                match indexed_value(schema, t.field, &t.term).filter(|_| point) {
                    Some(v) => {
                        Query::Range(RangeQuery { field: t.field, lower: v, upper: v, indexed: Some(t.term) })
                    }
                    None => Query::Term(t),
                },
            )
        }
        other => Ok(other),
    };
    query.clone().try_map_leaves(&mut point_of).unwrap_or_else(|never| match never {})
}

/// Whether a field of this kind has a doc values column.
pub fn has_doc_values(kind: FieldKind) -> bool {
    matches!(kind, FieldKind::Long | FieldKind::Double | FieldKind::Boolean | FieldKind::Date)
}

/// A column value as Elasticsearch shows a sort value: a number (a double
/// for doubles, milliseconds for dates, 0/1 for booleans).
pub fn column_json(kind: FieldKind, v: i64) -> Value {
    match kind {
        FieldKind::Double => {
            let f = sortable_to_double(v);
            // Infinities (a missing value's stand-in) as Java prints them.
            let infinite = || Value::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.into());
            serde_json::Number::from_f64(f).map_or_else(infinite, Value::Number)
        }
        _ => Value::from(v),
    }
}

/// What a document without a value sorts as: last (Elasticsearch's default)
/// or first, in either direction.
pub fn missing_value(kind: FieldKind, descending: bool, missing_first: bool) -> i64 {
    let high = descending == missing_first;
    match (kind, high) {
        (FieldKind::Double, true) => double_to_sortable(f64::INFINITY),
        (FieldKind::Double, false) => double_to_sortable(f64::NEG_INFINITY),
        (_, true) => i64::MAX,
        (_, false) => i64::MIN,
    }
}

/// A value given in a query (a `search_after` value) as a column value of `kind`.
pub fn query_value(kind: FieldKind, field: &str, v: &Value) -> Result<i64> {
    match parse_bound(kind, field, v, &DateReading::utc_now())? {
        Bound::Exact(i) => Ok(i),
        Bound::Fraction(f) => Ok(f.floor() as i64),
        Bound::Double(f) => Ok(double_to_sortable(f)),
        Bound::Span(start, _) => Ok(start),
    }
}

/// The bounds a range query gives, any of them absent.
#[derive(Debug, Default, Clone, Copy)]
pub struct RangeBounds<'a> {
    pub gte: Option<&'a Value>,
    pub gt: Option<&'a Value>,
    pub lte: Option<&'a Value>,
    pub lt: Option<&'a Value>,
    /// How date bounds are read (`None`: the default format, UTC, now).
    pub dates: Option<&'a DateReading>,
}

/// A range over a field of `kind` as inclusive column values, as
/// Elasticsearch reads the bounds: a fraction bounding a long rounds toward
/// the range (`gte: 1.5` is `>= 2`); a date's missing time of day is filled
/// with its last millisecond for `lte` and `gt` (`lte: "2024-03"` is
/// `<= 2024-03-01T23:59:59.999`: missing months and days are the first, not
/// rounded up, as Elasticsearch documents and OpenSearch answers).
pub fn range_bounds(kind: FieldKind, field: &str, b: RangeBounds<'_>) -> Result<(i64, i64)> {
    let default;
    let dates = match b.dates {
        Some(d) => d,
        None => {
            default = DateReading::utc_now();
            &default
        }
    };
    let parse = |v: Option<&Value>| v.map(|v| parse_bound(kind, field, v, dates)).transpose();
    let lower = [parse(b.gte)?.map(|v| v.first()), parse(b.gt)?.map(|v| v.last().saturating_add(1))];
    let upper = [parse(b.lte)?.map(|v| v.last()), parse(b.lt)?.map(|v| v.first().saturating_sub(1))];
    Ok((
        lower.into_iter().flatten().fold(i64::MIN, i64::max),
        upper.into_iter().flatten().fold(i64::MAX, i64::min),
    ))
}

/// A bound as given: an exact integer, a fraction (for integer fields), a
/// double, or a date's span (first and last millisecond).
enum Bound {
    Exact(i64),
    Fraction(f64),
    Double(f64),
    Span(i64, i64),
}

impl Bound {
    /// The smallest column value the bound stands for (a fraction rounded up).
    fn first(&self) -> i64 {
        match *self {
            Bound::Exact(i) => i,
            Bound::Fraction(f) => f.ceil() as i64,
            Bound::Double(f) => double_to_sortable(f),
            Bound::Span(start, _) => start,
        }
    }

    /// The largest column value the bound stands for (a fraction rounded down).
    fn last(&self) -> i64 {
        match *self {
            Bound::Exact(i) => i,
            Bound::Fraction(f) => f.floor() as i64,
            Bound::Double(f) => double_to_sortable(f),
            Bound::Span(_, end) => end,
        }
    }
}

fn parse_bound(kind: FieldKind, field: &str, v: &Value, dates: &DateReading) -> Result<Bound> {
    let bad = || {
        let shown = needle_core::printable(&v.to_string(), 64);
        Error::invalid_field(field, format!("{shown} is not a value of {} field `{field}`", kind.name()))
    };
    let number = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match kind {
        FieldKind::Double => number.filter(|f| !f.is_nan()).map(Bound::Double).ok_or_else(bad),
        FieldKind::Long => {
            let exact = match v {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            };
            match (exact, number) {
                (Some(i), _) => Ok(Bound::Exact(i)),
                (None, Some(f)) if f.is_finite() => Ok(Bound::Fraction(f)),
                _ => Err(bad()),
            }
        }
        FieldKind::Boolean => match v {
            Value::Bool(b) => Ok(Bound::Exact(i64::from(*b))),
            Value::String(s) if s == "true" || s == "false" => Ok(Bound::Exact(i64::from(s == "true"))),
            _ => Err(bad()),
        },
        // A number is read as its text, as Elasticsearch reads it: `2020` is a
        // year in the default format, `1577836800` seconds in `epoch_second`.
        FieldKind::Date => {
            let text = match v {
                Value::Number(n) if n.is_i64() => n.to_string(),
                Value::String(s) => s.clone(),
                _ => return Err(bad()),
            };
            dates
                .parse(&text, false)
                .zip(dates.parse(&text, true))
                .map(|(a, b)| Bound::Span(a, b))
                .ok_or_else(|| date_error(field, &text, dates.format.spec()))
        }
        FieldKind::Text | FieldKind::Keyword | FieldKind::Binary => Err(Error::invalid_field(
            field,
            format!(
                "field `{field}` is {}: ranges and sorts need a numeric, date or boolean field",
                kind.name()
            ),
        )),
    }
}

pub(crate) fn date_error(field: &str, s: &str, format: &str) -> Error {
    let shown = needle_core::printable(s, 64);
    Error::invalid_field(
        field,
        format!("failed to parse date field [{shown}] of `{field}` with format [{format}]"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date_format::parse_date;
    use serde_json::json;

    #[test]
    fn a_value_given_reads_back_as_its_json_text() {
        let values = [
            json!(0),
            json!(-1),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(1.5),
            json!(-0.0),
            json!(1e300),
            json!("2024-01-02"),
            json!(true),
        ];
        for v in values {
            assert_eq!(given_text(&v), v.to_string(), "{v}");
        }
    }

    #[test]
    fn bounds_round_toward_the_range() {
        let (a, b) = (Value::from(1.5), Value::from(1.5));
        let long = |bounds| range_bounds(FieldKind::Long, "n", bounds).unwrap();
        assert_eq!(long(RangeBounds { gte: Some(&a), lte: Some(&b), ..Default::default() }), (2, 1));
        assert_eq!(long(RangeBounds { gt: Some(&a), lt: Some(&b), ..Default::default() }), (2, 1));
        let seven = Value::from("7");
        assert_eq!(long(RangeBounds { gt: Some(&seven), ..Default::default() }), (8, i64::MAX));
        let march = Value::from("2024-03");
        let date = |bounds| range_bounds(FieldKind::Date, "d", bounds).unwrap();
        let (start, end) =
            (parse_date("2024-03-01", false).unwrap(), parse_date("2024-03-02", false).unwrap() - 1);
        assert_eq!(
            date(RangeBounds { gte: Some(&march), lte: Some(&march), ..Default::default() }),
            (start, end)
        );
        assert_eq!(
            date(RangeBounds { gt: Some(&march), lt: Some(&march), ..Default::default() }),
            (end + 1, start - 1)
        );
        let err = query_value(FieldKind::Text, "t", &Value::from(1)).unwrap_err().to_string();
        assert!(err.contains("field `t` is text"), "{err}");
    }

    #[test]
    fn missing_sorts_last_unless_asked_first() {
        assert_eq!(missing_value(FieldKind::Long, false, false), i64::MAX);
        assert_eq!(missing_value(FieldKind::Long, true, false), i64::MIN);
        assert_eq!(missing_value(FieldKind::Date, false, true), i64::MIN);
    }
}
