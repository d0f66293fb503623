//! A typed way to build a document, besides JSON text or a `serde_json::Value`:
//! `Document::new().id("7").text("title", "Hello").long("year", 1999)`.
//! A field given twice holds both values (an array), as in JSON.

use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    fields: Map<String, Value>,
}

impl Document {
    pub fn new() -> Self {
        Document::default()
    }

    /// The document's `_id` (generated when not given).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.fields.insert("id".into(), Value::String(id.into()));
        self
    }

    /// A string value: analyzed text or a keyword, as the mapping says.
    pub fn text(self, field: &str, value: impl Into<String>) -> Self {
        self.value(field, Value::String(value.into()))
    }

    pub fn long(self, field: &str, value: i64) -> Self {
        self.value(field, Value::from(value))
    }

    /// A floating-point value (one that is not finite is left out, as JSON cannot hold it).
    pub fn double(self, field: &str, value: f64) -> Self {
        self.value(field, Value::from(value))
    }

    pub fn boolean(self, field: &str, value: bool) -> Self {
        self.value(field, Value::Bool(value))
    }

    /// Adds `value` to `field` (a second value makes the field an array).
    pub fn value(mut self, field: &str, value: Value) -> Self {
        if value.is_null() {
            return self;
        }
        match self.fields.get_mut(field) {
            None => {
                self.fields.insert(field.to_string(), value);
            }
            Some(Value::Array(values)) => values.push(value),
            Some(first) => *first = Value::Array(vec![first.take(), value]),
        }
        self
    }

    pub fn to_json(&self) -> String {
        Value::Object(self.fields.clone()).to_string()
    }
}

impl From<Document> for Value {
    fn from(d: Document) -> Value {
        Value::Object(d.fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_json_a_user_would_write() {
        let d =
            Document::new().id("7").text("title", "Hi").long("year", 1999).text("tag", "a").text("tag", "b");
        let v: Value = serde_json::from_str(&d.clone().to_json()).unwrap();
        assert_eq!(v, serde_json::json!({"id": "7", "title": "Hi", "year": 1999, "tag": ["a", "b"]}));
        assert_eq!(Value::from(Document::new().double("x", f64::NAN)), serde_json::json!({}));
    }
}
