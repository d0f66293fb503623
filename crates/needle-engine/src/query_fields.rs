//! How the query parser sees the schema: which fields exist and how each
//! analyzes query text.

use needle_analysis::{Analyzer, QueryTerms};
use needle_core::{Error, FieldId, Result};
use needle_search::{term_range, Query, QueryFields, RangeQuery, TermRange};
use serde_json::Value;

use crate::date_math::{now_ms, DateReading};
use crate::document::{canonical_double, canonical_long};
use crate::schema::{FieldKind, Schema};
use crate::values::{range_bounds, RangeBounds};
use crate::zone::Zone;

impl QueryFields for Schema {
    fn field_id(&self, name: &str) -> Option<FieldId> {
        // `id` names the `_id` unless the index has a field of that name (a server's documents).
        let name = if name == "id" && Schema::field_id(self, "id").is_none() { "_id" } else { name };
        // Not indexed: a text field is in the source only; others are doc values.
        Schema::field_id(self, name).filter(|&f| self.field(f).index || self.field(f).kind != FieldKind::Text)
    }

    fn default_fields(&self) -> Vec<FieldId> {
        self.text_fields()
    }

    fn analyze(&self, field: FieldId, text: &str) -> Result<Vec<(u32, String)>> {
        self.analyze_with(field, text, None)
    }

    fn analyze_graph(&self, field: FieldId, text: &str) -> Result<QueryTerms> {
        self.query_terms(field, text, None)
    }

    fn analyze_quoted(&self, field: FieldId, text: &str) -> Result<QueryTerms> {
        self.quoted_terms(field, text)
    }

    fn range(&self, field: FieldId, range: &TermRange) -> Result<Query> {
        self.value_range(field, range)
    }

    /// Keyword, binary and text fields by their doc values or norms (a text
    /// field's documents with a token), the others by their column.
    fn exists(&self, field: FieldId) -> Result<Query> {
        Ok(match self.field(field).kind {
            FieldKind::Keyword | FieldKind::Binary | FieldKind::Text => Query::Exists(field),
            _ => Query::Range(RangeQuery { field, lower: i64::MIN, upper: i64::MAX, indexed: None }),
        })
    }

    fn normalize(&self, field: FieldId, text: &str) -> Result<String> {
        let def = self.field(field);
        not_indexed(def)?;
        match def.kind {
            FieldKind::Text => {
                Ok(self.search_analyzer(field).expect("indexed text fields have analyzers").normalize(text))
            }
            FieldKind::Keyword => Ok(self.normalized(field, text).into_owned()),
            kind => Err(Error::query(format!(
                "prefix, wildcard and fuzzy queries need a text or keyword field; `{}` holds {} values",
                def.name,
                kind.name()
            ))),
        }
    }
}

impl Schema {
    /// `text` of a query for `field`, analyzed: a text or keyword field's by
    /// `chosen` (a query's own `analyzer`) or else its search analyzer or
    /// normalizer; other fields by their type (`chosen` is not looked at).
    /// An error where the terms make a graph (see [`Schema::query_terms`]).
    pub fn analyze_with(
        &self,
        field: FieldId,
        text: &str,
        chosen: Option<&Analyzer>,
    ) -> Result<Vec<(u32, String)>> {
        self.query_terms(field, text, chosen)?.positioned().map_err(Error::query)
    }

    /// As [`Schema::analyze_with`], the tokens kept whole where some span
    /// several positions (a graph of terms, for the queries that take one).
    pub fn query_terms(&self, field: FieldId, text: &str, chosen: Option<&Analyzer>) -> Result<QueryTerms> {
        let def = self.field(field);
        not_indexed(def)?;
        let single = |t: Option<String>| {
            t.map(|t| QueryTerms::Positioned(vec![(0, t)])).ok_or_else(|| {
                Error::query(format!(
                    "field `{}` holds {} values; `{text}` is not one",
                    def.name,
                    def.kind.name()
                ))
            })
        };
        match def.kind {
            FieldKind::Text => {
                let analyzer = chosen.or_else(|| self.search_analyzer(field));
                let analyzer = analyzer.expect("indexed text fields have analyzers");
                // Several terms at one position (synonyms, n-grams) are kept: the query
                // builders make a synonym query of them (`needle_search::analyzed`).
                Ok(analyzer.query_terms(text))
            }
            // A query's own analyzer applies to a keyword field too, as in Elasticsearch.
            FieldKind::Keyword => match chosen {
                Some(analyzer) => Ok(analyzer.query_terms(text)),
                None => Ok(QueryTerms::Positioned(vec![(0, self.normalized(field, text).into_owned())])),
            },
            FieldKind::Long => single(canonical_long(text)),
            FieldKind::Double => {
                single(text.trim().parse::<f64>().ok().filter(|f| f.is_finite()).map(canonical_double))
            }
            FieldKind::Boolean => single((text == "true" || text == "false").then(|| text.to_string())),
            FieldKind::Date => {
                single(def.parse_date(text, crate::zone::Zone::UTC, false).map(|ms| ms.to_string()))
            }
            // Elasticsearch's words: its values are kept as doc values only.
            FieldKind::Binary => Err(Error::query(format!(
                "Binary fields do not support searching: field `{}` is binary",
                def.name
            ))),
        }
    }

    /// As [`Schema::query_terms`], text of a phrase in quotes: by the field's
    /// search quote analyzer when it has one.
    pub fn quoted_terms(&self, field: FieldId, text: &str) -> Result<QueryTerms> {
        self.query_terms(field, text, self.search_quote_analyzer(field))
    }

    /// A range of a number, date or boolean field as its column values
    /// (bounds read as a `range` query reads them: dates in the field's
    /// format, with date math); of other fields, the terms between the bounds.
    fn value_range(&self, field: FieldId, range: &TermRange) -> Result<Query> {
        let def = self.field(field);
        not_indexed(def)?;
        match def.kind {
            FieldKind::Text | FieldKind::Keyword => term_range(field, range, |b| self.normalize(field, b)),
            FieldKind::Binary => Err(Error::query(format!(
                "Binary fields do not support searching: field `{}` is binary",
                def.name
            ))),
            kind => {
                let value = |b: &Option<String>| b.clone().map(Value::String);
                let (lower, upper) = (value(&range.lower), value(&range.upper));
                let (gte, gt) =
                    if range.include_lower { (lower.as_ref(), None) } else { (None, lower.as_ref()) };
                let (lte, lt) =
                    if range.include_upper { (upper.as_ref(), None) } else { (None, upper.as_ref()) };
                let dates = DateReading { format: def.date_format(), zone: Zone::UTC, now_ms: now_ms() };
                let bounds = RangeBounds { gte, gt, lte, lt, dates: Some(&dates) };
                let (lower, upper) = range_bounds(kind, &def.name, bounds)?;
                Ok(Query::Range(RangeQuery { field, lower, upper, indexed: None }))
            }
        }
    }
}

/// A field kept as doc values only (`index: false`) is searched for terms
/// only when it is a number or a date (matched on its doc values); a
/// keyword or boolean one has no terms to find (Elasticsearch's words).
fn not_indexed(def: &crate::schema::FieldDef) -> Result<()> {
    match def.index || crate::values::is_point(def.kind) {
        true => Ok(()),
        false => Err(Error::query(format!("Cannot search on field [{}] since it is not indexed.", def.name))),
    }
}
