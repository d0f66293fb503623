//! JSON lines -> documents: the `_id`, the values of each field checked
//! against the schema, and the stored record (its format, the `_id` and
//! version ahead of the source, is the document store's:
//! `needle_codecs::docstore::record`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub(crate) use needle_codecs::docstore::record::{self, DocVersion};
use needle_core::{Error, FieldId, Result};
use needle_index::AnalyzedDoc;
use serde_json::Value;

use crate::date_format::DEFAULT_DATE_FORMAT;
use crate::schema::{FieldDef, FieldKind, Schema, SharedSchema, ID_FIELD};

/// The longest `_id`, in bytes (Elasticsearch's limit).
pub const MAX_ID_BYTES: usize = 512;

/// A document ready for a segment builder.
pub(crate) struct ParsedDoc {
    pub id: String,
    /// Whether `id` is the source's `id` field (no `_id` was given): a
    /// replay of the source alone finds it again, and that field is not indexed.
    pub id_in_source: bool,
    pub fields: Vec<(FieldId, Vec<String>)>,
    pub stored: Vec<u8>,
}

/// Parses and checks one JSON line; the error says what is wrong with it
/// (the caller adds the line number). Fields the document brings are added
/// to `schema` (when it is dynamic) only once the whole document is found
/// valid, so a refused document changes nothing. `given_id` is the `_id` a
/// replayed log record names (the JSON's own, or one generated then). Returns
/// the document and the schema its field ids belong to.
pub(crate) fn parse_document(
    line: &str,
    schema: &SharedSchema,
    given_id: Option<&str>,
) -> Result<(ParsedDoc, Arc<Schema>)> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| Error::invalid(format!("malformed JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        return Err(Error::invalid("a document must be a JSON object"));
    };
    // Given an `_id` (a server's write, a log's replay), an `id` field is a field like any other,
    // as in Elasticsearch; otherwise (a JSON lines import, an add) it is the `_id`.
    let from_source = match given_id {
        Some(_) => None,
        None => object.remove("id"),
    };
    let id_in_source = from_source.as_ref().is_some_and(|v| !v.is_null());
    let id = match (given_id, from_source) {
        (Some(id), _) => id.to_string(),
        (None, None | Some(Value::Null)) => generated_id(),
        (None, Some(Value::String(s))) if !s.is_empty() && s.len() <= MAX_ID_BYTES => s,
        (None, Some(Value::Number(n))) => n.to_string(),
        (None, Some(other)) => {
            let shown = needle_core::printable(&other.to_string(), 64);
            return Err(Error::invalid_field(
                "id",
                format!("`id` must be a non-empty string of at most {MAX_ID_BYTES} bytes, not {shown}"),
            ));
        }
    };
    let mut named: Vec<(String, Vec<&Value>)> = Vec::new();
    for (key, v) in &object {
        flatten(key, v, &mut named);
    }
    let current = schema.current();
    let mut fields = Vec::with_capacity(named.len());
    let mut new_fields: Vec<(FieldDef, Vec<String>)> = Vec::new();
    for (name, values) in named {
        if name == "_id" {
            return Err(Error::invalid_field("_id", "`_id` is reserved; give the document id as `id`"));
        }
        let Some(id) = current.field_id(&name) else {
            let Some(sample) = values.iter().find(|v| !v.is_null()) else { continue };
            for def in current.dynamic_defs(&name, sample)? {
                let strings = indexed_values(&def, &values)?;
                new_fields.push((def, strings));
            }
            continue;
        };
        if current.field(id).multi_of.is_some() {
            // A multi-field takes its parent's values, not the source's.
            let reason = format!("`{name}` is a multi-field of another field: it is not given in a document");
            return Err(Error::invalid_field(&name, reason));
        }
        for &field in std::iter::once(&id).chain(current.multi_fields(id)) {
            let def = current.field(field);
            // A text field not indexed is kept in the source only; others keep their doc values.
            if def.index || def.kind != FieldKind::Text {
                let strings = indexed_values(def, &values)?;
                if !strings.is_empty() {
                    fields.push((field, strings));
                }
            }
        }
    }
    let current = match new_fields.is_empty() {
        true => current,
        false => {
            let defs: Vec<FieldDef> = new_fields.iter().map(|(d, _)| d.clone()).collect();
            schema.add_fields(&defs)?
        }
    };
    for (def, strings) in new_fields {
        fields.push((current.field_id(&def.name).expect("just added"), strings));
    }
    fields.sort_by_key(|(f, _)| *f);
    Ok((ParsedDoc { stored: record::encode(&id, line.trim()), id, id_in_source, fields }, current))
}

/// The indexed forms of a field's values (nulls, and keywords longer than
/// its `ignore_above`, left out), or why one does not fit its type.
fn indexed_values(def: &FieldDef, values: &[&Value]) -> Result<Vec<String>> {
    let mut out: Vec<String> =
        values.iter().filter(|v| !v.is_null()).map(|v| field_value(def, v)).collect::<Result<_>>()?;
    if let Some(most) = def.ignore_above {
        out.retain(|s| s.chars().count() <= most as usize);
    }
    if def.kind == FieldKind::Binary && out.len() > 1 {
        let reason =
            format!("field `{}` is binary: it takes one value a document, not {}", def.name, out.len());
        return Err(Error::invalid_field(&def.name, reason));
    }
    Ok(out)
}

/// Objects become dotted names (`{"a":{"b":1}}` is field `a.b`); arrays are multiple values.
fn flatten<'v>(name: &str, v: &'v Value, out: &mut Vec<(String, Vec<&'v Value>)>) {
    match v {
        Value::Object(m) => {
            for (k, inner) in m {
                flatten(&format!("{name}.{k}"), inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| flatten(name, i, out)),
        _ => match out.iter_mut().find(|(n, _)| n == name) {
            Some((_, values)) => values.push(v),
            None => out.push((name.to_string(), vec![v])),
        },
    }
}

/// The indexed form of one value, or why it does not fit the field's type.
pub(crate) fn field_value(def: &FieldDef, v: &Value) -> Result<String> {
    let (name, kind) = (def.name.as_str(), def.kind);
    let wrong = || {
        let shown = needle_core::printable(&v.to_string(), 64);
        Error::invalid_field(
            name,
            format!("field `{name}` is {} in the mapping; the value {shown} is not", article(kind)),
        )
    };
    match (kind, v) {
        (FieldKind::Text | FieldKind::Keyword, Value::String(s)) => Ok(s.clone()),
        (FieldKind::Text | FieldKind::Keyword, Value::Number(_) | Value::Bool(_)) => Ok(v.to_string()),
        (FieldKind::Long, Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9e18).map(|f| f as i64))
            .map(|i| i.to_string())
            .ok_or_else(wrong),
        (FieldKind::Long, Value::String(s)) => canonical_long(s).ok_or_else(wrong),
        (FieldKind::Double, Value::Number(n)) => n.as_f64().map(canonical_double).ok_or_else(wrong),
        (FieldKind::Double, Value::String(s)) => {
            s.trim().parse::<f64>().ok().filter(|f| f.is_finite()).map(canonical_double).ok_or_else(wrong)
        }
        (FieldKind::Date, Value::Number(n)) => n.as_i64().map(|i| i.to_string()).ok_or_else(wrong),
        (FieldKind::Date, Value::String(s)) => match &def.format {
            None => crate::date_format::parse_date(s, false),
            Some(_) => def.parse_date(s, crate::zone::Zone::UTC, false),
        }
        .map(|ms| ms.to_string())
        .ok_or_else(|| {
            crate::values::date_error(name, s, def.format.as_deref().unwrap_or(DEFAULT_DATE_FORMAT))
        }),
        (FieldKind::Boolean, Value::Bool(b)) => Ok(b.to_string()),
        (FieldKind::Boolean, Value::String(s)) if s == "true" || s == "false" => Ok(s.clone()),
        (FieldKind::Binary, _) => {
            crate::values::binary_value(name, v).map(|_| v.as_str().unwrap_or_default().to_string())
        }
        _ => Err(wrong()),
    }
}

fn article(kind: FieldKind) -> String {
    match kind {
        FieldKind::Text => "text".into(),
        other => format!("a {}", other.name()),
    }
}

pub(crate) fn canonical_long(s: &str) -> Option<String> {
    s.trim().parse::<i64>().ok().map(|i| i.to_string())
}

/// The shortest text that reads back as `f` (`-0` stays apart from `0`, as
/// Lucene's double points keep them).
pub(crate) fn canonical_double(f: f64) -> String {
    format!("{f}")
}

/// Analyzes a parsed document (outside any lock) for a segment.
pub(crate) fn analyze(doc: ParsedDoc, schema: &Schema) -> AnalyzedDoc {
    let mut out = AnalyzedDoc::new(doc.stored);
    out.keyword(ID_FIELD, &[doc.id.as_str()]);
    for (field, values) in &doc.fields {
        let kind = schema.field(*field).kind;
        if kind == FieldKind::Binary {
            // Kept as doc values only, not searched (one value: see `indexed_values`).
            if let Some(bytes) = values.first().and_then(|v| crate::values::base64_bytes(v)) {
                out.binary(*field, bytes);
            }
            continue;
        }
        // A keyword field's terms and doc values are its values through its normalizer.
        let normalized: Vec<std::borrow::Cow<str>> =
            values.iter().map(|v| schema.normalized(*field, v)).collect();
        let values: Vec<&str> = normalized.iter().map(|v| v.as_ref()).collect();
        match (schema.analyzer(*field), schema.field(*field).index) {
            (Some(analyzer), _) => out.text(*field, analyzer, &values),
            (None, true) => out.keyword(*field, &values),
            // `index: false`: doc values only (sorts, ranges, aggregations), no terms.
            (None, false) => {}
        }
        if crate::values::has_doc_values(kind) {
            out.numeric(*field, values.iter().filter_map(|v| crate::values::column_value(kind, v)).collect());
        } else if kind == FieldKind::Keyword {
            out.keyword_values(*field, values.iter().map(|v| v.to_string()).collect());
        }
    }
    out
}

/// A new `_id`: 20 characters, unique in this process and (by the clock) across runs.
pub(crate) fn generated_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    format!("{nanos:016x}{:04x}", NEXT.fetch_add(1, Ordering::Relaxed) & 0xffff)
}

/// The text of `field` in a JSON source, values joined by one space (as their
/// offsets were counted when indexed).
pub(crate) fn field_text(source: &Value, name: &str) -> Option<String> {
    Some(field_strings(source, name)?.join(" "))
}

/// Each value of field `name` (dotted for nested objects) in `source`, as text.
pub(crate) fn field_strings(source: &Value, name: &str) -> Option<Vec<String>> {
    let Value::Object(object) = source else { return None };
    let mut named = Vec::new();
    for (key, v) in object {
        flatten(key, v, &mut named);
    }
    let (_, values) = named.into_iter().find(|(n, _)| n == name)?;
    let strings = values
        .iter()
        .filter(|v| !v.is_null())
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    Some(strings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_fields_are_typed_from_values() {
        let schema = SharedSchema::new(Schema::default());
        let (doc, _) = parse_document(
            r#"{"id":"d1","title":"Hi","n":3,"x":1.5,"o":{"k":"v"},"t":["a","b"]}"#,
            &schema,
            None,
        )
        .unwrap();
        assert_eq!(doc.id, "d1");
        let s = schema.current();
        let kinds: Vec<_> =
            ["title", "n", "x", "o.k", "t"].iter().map(|n| s.field(s.field_id(n).unwrap()).kind).collect();
        assert_eq!(
            kinds,
            [FieldKind::Text, FieldKind::Long, FieldKind::Double, FieldKind::Text, FieldKind::Text]
        );
        let t = s.field_id("t").unwrap();
        assert_eq!(doc.fields.iter().find(|(f, _)| *f == t).unwrap().1, ["a", "b"]);
    }

    #[test]
    fn a_refused_document_adds_no_field() {
        let schema = SharedSchema::new(Schema::default());
        let err = parse_document(r#"{"id":"1","f":42,"g":[1,"x"]}"#, &schema, None).err().unwrap();
        assert!(err.to_string().contains("field `g` is a long"), "{err}");
        assert_eq!(schema.current().fields.len(), 1, "neither f nor g was added");
        let (doc, s) = parse_document(r#"{"id":"2","f":"hello"}"#, &schema, None).unwrap();
        assert_eq!(s.field(doc.fields[0].0).kind, FieldKind::Text);
    }

    #[test]
    fn values_that_break_the_schema_are_refused() {
        let schema = SharedSchema::new(Schema::default());
        parse_document(r#"{"year":1790}"#, &schema, None).unwrap();
        let err = parse_document(r#"{"year":"soon"}"#, &schema, None).err().unwrap();
        assert!(matches!(&err, Error::InvalidInput { field: Some(f), .. } if f == "year"), "{err}");
        assert!(err.to_string().contains("field `year` is a long"), "{err}");
        let message = |line: &str| parse_document(line, &schema, None).err().unwrap().to_string();
        assert!(message("[1]").contains("JSON object"));
        assert!(message("{").contains("malformed JSON"));
    }

    #[test]
    fn id_is_the_id_in_an_import_and_a_field_when_the_id_is_given() {
        let schema = SharedSchema::new(Schema::default());
        let (doc, s) = parse_document(r#"{"id":"a","n":1}"#, &schema, None).unwrap();
        assert_eq!((doc.id.as_str(), doc.id_in_source), ("a", true));
        assert!(s.field_id("id").is_none(), "the `_id` only");
        let (doc, s) = parse_document(r#"{"id":"a","n":1}"#, &schema, Some("x")).unwrap();
        assert_eq!((doc.id.as_str(), doc.id_in_source), ("x", false));
        let field = s.field_id("id").expect("a field like any other");
        assert_eq!(doc.fields.iter().find(|(f, _)| *f == field).unwrap().1, ["a"]);
        let (doc, _) = parse_document(r#"{"n":2}"#, &schema, None).unwrap();
        assert!(!doc.id_in_source && !doc.id.is_empty(), "a generated `_id` is not the source's");
    }
}
