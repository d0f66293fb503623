//! The field-value benchmark's side of the peer: the fields of the corpus with values
//! (`needle-bench with-values`) and the `values` mode of bench/PROTOCOL.md, a search body in
//! Elasticsearch's DSL (the subset `needle-bench values` sends) run tantivy's way:
//!
//! - queries: `match_all` (AllQuery), `match_none` (EmptyQuery), `match` (the field's QueryParser, terms OR'ed), `range`
//!   (RangeQuery, over the fast field), `bool` (must, should, must_not; a filter is a must scoring
//!   0 through ConstScoreQuery);
//! - a sort by one field: `TopDocs::order_by_fast_field`; by score: `order_by_score`; the total
//!   is counted (`Count`) only when `track_total_hits` is `true`, else it is the hits returned;
//! - aggregations: tantivy's own (`AggregationCollector`, Elasticsearch's request and answer).
//!
//! Answer: `ID\tTOTAL\tIDS\t\t{"sort":[...],"aggs":{...}}`.

use std::ops::Bound;

use serde_json::{json, Value};
use tantivy::aggregation::agg_req::Aggregations;
use tantivy::aggregation::AggregationCollector;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{AllQuery, BooleanQuery, ConstScoreQuery, EmptyQuery, Occur, Query, RangeQuery};
use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, FieldType, NumericOptions, Schema, SchemaBuilder, Value as _,
    FAST, INDEXED, STRING,
};
use tantivy::{DateTime, DocAddress, Order, TantivyDocument, Term};

use crate::Engine;

/// The value fields, added to every bench index (empty unless the corpus has them).
pub struct ValueFields {
    tag: Field,
    words: Field,
    rating: Field,
    stamp: Field,
}

pub fn add_fields(builder: &mut SchemaBuilder) -> ValueFields {
    let number = NumericOptions::from(INDEXED) | FAST;
    ValueFields {
        tag: builder.add_text_field("tag", STRING | FAST),
        words: builder.add_i64_field("words", number.clone()),
        rating: builder.add_f64_field("rating", number),
        stamp: builder.add_date_field(
            "stamp",
            DateOptions::from(INDEXED).set_fast().set_precision(DateTimePrecision::Milliseconds),
        ),
    }
}

impl ValueFields {
    pub fn add_values(&self, json: &Value, doc: &mut TantivyDocument) {
        if let Some(tag) = json.get("tag").and_then(Value::as_str) {
            doc.add_text(self.tag, tag);
        }
        if let Some(words) = json.get("words").and_then(Value::as_i64) {
            doc.add_i64(self.words, words);
        }
        if let Some(rating) = json.get("rating").and_then(Value::as_f64) {
            doc.add_f64(self.rating, rating);
        }
        if let Some(stamp) = json.get("stamp").and_then(Value::as_i64) {
            doc.add_date(self.stamp, DateTime::from_timestamp_millis(stamp));
        }
    }
}

pub fn answer(engine: &Engine, req_id: &str, body: &str) -> Result<String, String> {
    let body: Value = serde_json::from_str(body).map_err(|e| format!("body: {e}"))?;
    let searcher = &engine.searcher;
    let schema = searcher.schema();
    let query = query(engine, schema, body.get("query"))?;
    let size = body["size"].as_u64().unwrap_or(10) as usize;
    let exact = body["track_total_hits"] == json!(true);
    let search = |e: tantivy::TantivyError| format!("search: {e}");
    if let Some(spec) = body.get("aggs") {
        let aggs: Aggregations = serde_json::from_value(spec.clone()).map_err(|e| format!("aggs: {e}"))?;
        let collector = AggregationCollector::from_aggs(aggs, Default::default());
        let (total, result) = searcher.search(&query, &(Count, collector)).map_err(search)?;
        let aggs = serde_json::to_value(result).map_err(|e| format!("aggs: {e}"))?;
        return Ok(format!("{req_id}\t{total}\t\t\t{}", json!({"sort": [], "aggs": aggs})));
    }
    if size == 0 {
        let total = searcher.search(&query, &Count).map_err(search)?;
        return Ok(format!("{req_id}\t{total}\t\t\t{}", json!({"sort": [], "aggs": null})));
    }
    let top = TopDocs::with_limit(size);
    let (hits, total): (Vec<(Value, DocAddress)>, Option<usize>) = match body["sort"].get(0) {
        Some(Value::Object(key)) => {
            let (name, order) = key.iter().next().ok_or("sort: an empty key")?;
            let order = if order == "desc" { Order::Desc } else { Order::Asc };
            let field = schema.get_field(name).map_err(|e| format!("sort: {e}"))?;
            let shown = |v: Option<Value>| v.unwrap_or(Value::Null);
            macro_rules! by {
                ($t:ty, $show:expr) => {{
                    let c = top.order_by_fast_field::<$t>(name, order);
                    let (hits, total) = match exact {
                        true => {
                            let (h, n) = searcher.search(&query, &(c, Count)).map_err(search)?;
                            (h, Some(n))
                        }
                        false => (searcher.search(&query, &c).map_err(search)?, None),
                    };
                    (hits.into_iter().map(|(v, a)| (shown(v.map($show)), a)).collect(), total)
                }};
            }
            match schema.get_field_entry(field).field_type() {
                FieldType::I64(_) => by!(i64, |v: i64| json!(v)),
                FieldType::F64(_) => by!(f64, |v: f64| json!(v)),
                FieldType::Date(_) => by!(DateTime, |v: DateTime| json!(v.into_timestamp_millis())),
                other => return Err(format!("sort: unsupported field type {other:?}")),
            }
        }
        _ => {
            let c = top.order_by_score();
            let (hits, total) = match exact {
                true => {
                    let (h, n) = searcher.search(&query, &(c, Count)).map_err(search)?;
                    (h, Some(n))
                }
                false => (searcher.search(&query, &c).map_err(search)?, None),
            };
            (hits.into_iter().map(|(score, a)| (json!(score), a)).collect(), total)
        }
    };
    let mut ids = Vec::with_capacity(hits.len());
    for (_, address) in &hits {
        let doc: TantivyDocument = searcher.doc(*address).map_err(search)?;
        ids.push(doc.get_first(engine.id).and_then(|v| v.as_str()).unwrap_or("").to_string());
    }
    let values: Vec<&Value> = hits.iter().map(|(v, _)| v).collect();
    let total = total.unwrap_or(hits.len());
    Ok(format!("{req_id}\t{total}\t{}\t\t{}", ids.join(","), json!({"sort": values, "aggs": null})))
}

fn query(engine: &Engine, schema: &Schema, spec: Option<&Value>) -> Result<Box<dyn Query>, String> {
    let Some(spec) = spec else { return Ok(Box::new(AllQuery)) };
    let (kind, args) = single(spec, "query")?;
    Ok(match kind.as_str() {
        "match_all" => Box::new(AllQuery),
        "match_none" => Box::new(EmptyQuery),
        "match" => {
            let (field, text) = single(args, "match")?;
            let parser = engine
                .field_parsers
                .iter()
                .find(|(name, _)| name == field)
                .map(|(_, p)| p)
                .ok_or_else(|| format!("match: no text field {field}"))?;
            let text = text.as_str().ok_or("match: the text must be a string")?;
            match parser.parse_query(text) {
                Ok(q) => q,
                Err(_) => Box::new(EmptyQuery),
            }
        }
        "range" => {
            let (name, bounds) = single(args, "range")?;
            let field = schema.get_field(name).map_err(|e| format!("range: {e}"))?;
            let ty = schema.get_field_entry(field).field_type().clone();
            let term = |v: &Value| -> Result<Term, String> {
                match ty {
                    FieldType::I64(_) => v.as_i64().map(|v| Term::from_field_i64(field, v)),
                    FieldType::F64(_) => v.as_f64().map(|v| Term::from_field_f64(field, v)),
                    FieldType::Date(_) => {
                        v.as_i64().map(|v| Term::from_field_date(field, DateTime::from_timestamp_millis(v)))
                    }
                    _ => None,
                }
                .ok_or_else(|| format!("range: a bad bound {v} for {name}"))
            };
            let bound = |inclusive: &str, exclusive: &str| -> Result<Bound<Term>, String> {
                Ok(match (bounds.get(inclusive), bounds.get(exclusive)) {
                    (Some(v), _) => Bound::Included(term(v)?),
                    (None, Some(v)) => Bound::Excluded(term(v)?),
                    (None, None) => Bound::Unbounded,
                })
            };
            Box::new(RangeQuery::new(bound("gte", "gt")?, bound("lte", "lt")?))
        }
        "bool" => {
            let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for (key, list) in args.as_object().ok_or("bool: expected an object")? {
                let items = match list {
                    Value::Array(items) => items.iter().collect(),
                    one => vec![one],
                };
                for item in items {
                    let q = query(engine, schema, Some(item))?;
                    clauses.push(match key.as_str() {
                        "must" => (Occur::Must, q),
                        "filter" => (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0))),
                        "should" => (Occur::Should, q),
                        "must_not" => (Occur::MustNot, q),
                        other => return Err(format!("bool: unknown key {other}")),
                    });
                }
            }
            Box::new(BooleanQuery::new(clauses))
        }
        other => return Err(format!("unsupported query {other}")),
    })
}

fn single<'a>(spec: &'a Value, what: &str) -> Result<(&'a String, &'a Value), String> {
    match spec.as_object() {
        Some(map) if map.len() == 1 => Ok(map.iter().next().unwrap()),
        _ => Err(format!("{what}: expected an object of one key")),
    }
}
