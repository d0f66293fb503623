//! Aggregations: summaries of the documents a query matches, computed in one
//! pass over them from their doc values, answered in Elasticsearch's shapes
//! (`{"value": ...}` for a metric, `{"buckets": [...]}` for a bucketing).
//!
//! Metrics: `min`, `max`, `sum`, `avg`, `stats`, `value_count`. Buckets:
//! `histogram` (`interval`, `offset`), `date_histogram` (a fixed interval in
//! milliseconds, or a calendar unit, in UTC), `range` (`from` inclusive, `to`
//! exclusive), `terms` on keyword, numeric, date and boolean fields; each bucket may
//! hold sub-aggregations. A document with several values counts once in each
//! bucket one of them falls in; metrics count every value.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, NaiveDate};
use std::sync::Arc;

use needle_codecs::doc_values::{double_to_sortable, sortable_to_double, KeywordValues, NumericValues};
use needle_codecs::SegmentRead;
use needle_core::{DocId, FieldId, Result};
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Value};

use crate::schema::FieldKind;

/// A field an aggregation reads, with its type (how its column values read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AggField {
    pub id: FieldId,
    pub kind: FieldKind,
}

impl AggField {
    fn number(self, v: i64) -> f64 {
        match self.kind {
            FieldKind::Double => sortable_to_double(v),
            _ => v as f64,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Min,
    Max,
    Sum,
    Avg,
    Stats,
    ValueCount,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalendarUnit {
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateInterval {
    /// Milliseconds.
    Fixed(i64),
    Calendar(CalendarUnit),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermsOrder {
    CountDesc,
    CountAsc,
    KeyAsc,
    KeyDesc,
}

/// One `range` bucket: `from <= value < to`.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSpec {
    pub key: Option<String>,
    pub from: Option<f64>,
    pub to: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AggKind {
    Metric(Metric, AggField),
    Histogram { field: AggField, interval: f64, offset: f64, min_doc_count: u64 },
    DateHistogram { field: AggField, interval: DateInterval, min_doc_count: u64 },
    Range { field: AggField, ranges: Vec<RangeSpec> },
    Terms { field: AggField, size: usize, min_doc_count: u64, order: TermsOrder },
}

/// A named aggregation and its sub-aggregations (computed per bucket).
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregation {
    pub name: String,
    pub kind: AggKind,
    pub subs: Vec<Aggregation>,
}

impl Aggregation {
    fn field(&self) -> AggField {
        match &self.kind {
            AggKind::Metric(_, f) => *f,
            AggKind::Histogram { field, .. }
            | AggKind::DateHistogram { field, .. }
            | AggKind::Range { field, .. }
            | AggKind::Terms { field, .. } => *field,
        }
    }
}

/// What an aggregation has gathered so far.
#[derive(Debug, Clone)]
enum State {
    Metric {
        count: u64,
        sum: f64,
        min: f64,
        max: f64,
    },
    /// Buckets by key (histogram keys as sortable doubles, so the map orders them).
    Keyed(BTreeMap<i64, Bucket>),
    /// Buckets by keyword.
    Named(BTreeMap<Arc<[u8]>, Bucket>),
    Ranges(Vec<Bucket>),
}

#[derive(Debug, Clone, Default)]
struct Bucket {
    count: u64,
    subs: Vec<State>,
}

fn fresh(agg: &Aggregation) -> State {
    match &agg.kind {
        AggKind::Metric(..) => {
            State::Metric { count: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY }
        }
        AggKind::Range { ranges, .. } => State::Ranges(ranges.iter().map(|_| new_bucket(agg)).collect()),
        AggKind::Terms { field, .. } if field.kind == FieldKind::Keyword => State::Named(BTreeMap::new()),
        _ => State::Keyed(BTreeMap::new()),
    }
}

fn new_bucket(agg: &Aggregation) -> Bucket {
    Bucket { count: 0, subs: agg.subs.iter().map(fresh).collect() }
}

/// The columns of the segment being walked, each opened when first read.
#[derive(Default)]
struct Columns {
    segment: Option<usize>,
    open: FxHashMap<FieldId, Option<Box<dyn NumericValues + Send>>>,
    keywords: FxHashMap<FieldId, Option<Box<dyn KeywordValues + Send>>>,
}

impl Columns {
    /// Moves on to segment number `seg` (its columns not yet opened).
    fn enter(&mut self, seg: usize) {
        if self.segment != Some(seg) {
            self.segment = Some(seg);
            self.open.clear();
            self.keywords.clear();
        }
    }

    fn values(&mut self, segment: &dyn SegmentRead, field: FieldId, doc: DocId) -> Vec<i64> {
        let column = self.open.entry(field).or_insert_with(|| segment.numeric_values(field));
        column.as_mut().map_or_else(Vec::new, |c| c.values(doc).to_vec())
    }

    fn keywords(&mut self, segment: &dyn SegmentRead, field: FieldId, doc: DocId) -> Vec<Arc<[u8]>> {
        let column = self.keywords.entry(field).or_insert_with(|| segment.keyword_values(field));
        let Some(c) = column.as_mut() else { return Vec::new() };
        let ids = c.ids(doc).to_vec();
        ids.into_iter().map(|id| c.term(id)).collect()
    }
}

/// Where the walk is: the segment, its columns, the document.
struct At<'a, 's> {
    segment: &'s dyn SegmentRead,
    columns: &'a mut Columns,
    doc: DocId,
}

/// Runs `aggs` over every match: `walk` calls its visitor once per matching
/// document (segment number, segment, document). Returns the `aggregations` object.
pub(crate) fn aggregate(
    aggs: &[Aggregation],
    walk: impl FnOnce(&mut dyn FnMut(usize, &dyn SegmentRead, DocId)) -> Result<u64>,
) -> Result<Map<String, Value>> {
    let mut states: Vec<State> = aggs.iter().map(fresh).collect();
    let mut columns = Columns::default();
    walk(&mut |seg, segment, doc| {
        columns.enter(seg);
        for (agg, state) in aggs.iter().zip(states.iter_mut()) {
            collect(agg, state, &mut At { segment, columns: &mut columns, doc });
        }
    })?;
    needle_core::read_error::check()?;
    Ok(aggs.iter().zip(states).map(|(a, s)| (a.name.clone(), finish(a, s))).collect())
}

fn collect(agg: &Aggregation, state: &mut State, at: &mut At<'_, '_>) {
    let field = agg.field();
    if let State::Named(buckets) = state {
        for term in at.columns.keywords(at.segment, field.id, at.doc) {
            let bucket = buckets.entry(term).or_insert_with(|| new_bucket(agg));
            fill(agg, bucket, at);
        }
        return;
    }
    let values = at.columns.values(at.segment, field.id, at.doc);
    match (state, &agg.kind) {
        (State::Metric { count, sum, min, max }, AggKind::Metric(..)) => {
            for &v in &values {
                let x = field.number(v);
                *count += 1;
                *sum += x;
                *min = min.min(x);
                *max = max.max(x);
            }
        }
        (State::Ranges(buckets), AggKind::Range { ranges, .. }) => {
            for (bucket, range) in buckets.iter_mut().zip(ranges) {
                // Compared as doubles (-0.0 equals 0.0), as Elasticsearch's range aggregator compares.
                let inside = |x: f64| range.from.is_none_or(|f| x >= f) && range.to.is_none_or(|t| x < t);
                if values.iter().any(|&v| inside(field.number(v))) {
                    fill(agg, bucket, at);
                }
            }
        }
        (State::Keyed(buckets), kind) => {
            let mut keys: Vec<i64> = values.iter().map(|&v| bucket_key(kind, field, v)).collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                let bucket = buckets.entry(key).or_insert_with(|| new_bucket(agg));
                fill(agg, bucket, at);
            }
        }
        _ => unreachable!("states are made for their aggregations"),
    }
}

/// Counts `doc` in `bucket` and gives it to the bucket's sub-aggregations.
fn fill(agg: &Aggregation, bucket: &mut Bucket, at: &mut At<'_, '_>) {
    bucket.count += 1;
    for (sub, state) in agg.subs.iter().zip(bucket.subs.iter_mut()) {
        collect(sub, state, at);
    }
}

/// The bucket a column value falls in.
fn bucket_key(kind: &AggKind, field: AggField, v: i64) -> i64 {
    match kind {
        AggKind::Histogram { interval, offset, .. } => {
            double_to_sortable(((field.number(v) - offset) / interval).floor() * interval + offset)
        }
        AggKind::DateHistogram { interval: DateInterval::Fixed(ms), .. } => v.div_euclid(*ms) * ms,
        AggKind::DateHistogram { interval: DateInterval::Calendar(unit), .. } => calendar_floor(*unit, v),
        _ => v,
    }
}

const DAY: i64 = 86_400_000;

/// The start (UTC) of the calendar unit holding `ms`.
fn calendar_floor(unit: CalendarUnit, ms: i64) -> i64 {
    let fixed = |span: i64| ms.div_euclid(span) * span;
    let date = || DateTime::from_timestamp_millis(ms).map(|d| d.date_naive());
    let start = |d: Option<NaiveDate>| {
        d.and_then(|d| d.and_hms_opt(0, 0, 0)).map_or(ms, |t| t.and_utc().timestamp_millis())
    };
    match unit {
        CalendarUnit::Minute => fixed(60_000),
        CalendarUnit::Hour => fixed(3_600_000),
        CalendarUnit::Day => fixed(DAY),
        // 1970-01-01 was a Thursday; weeks start on Monday.
        CalendarUnit::Week => (ms + 3 * DAY).div_euclid(7 * DAY) * 7 * DAY - 3 * DAY,
        CalendarUnit::Month => start(date().and_then(|d| d.with_day(1))),
        CalendarUnit::Quarter => {
            start(date().and_then(|d| NaiveDate::from_ymd_opt(d.year(), (d.month0() / 3) * 3 + 1, 1)))
        }
        CalendarUnit::Year => start(date().and_then(|d| NaiveDate::from_ymd_opt(d.year(), 1, 1))),
    }
}

/// The start of the calendar unit after the one starting at `ms`.
fn calendar_next(unit: CalendarUnit, ms: i64) -> i64 {
    let months = |n: u32| {
        DateTime::from_timestamp_millis(ms)
            .and_then(|d| d.checked_add_months(chrono::Months::new(n)))
            .map_or(i64::MAX, |d| d.timestamp_millis())
    };
    match unit {
        CalendarUnit::Minute => ms + 60_000,
        CalendarUnit::Hour => ms + 3_600_000,
        CalendarUnit::Day => ms + DAY,
        CalendarUnit::Week => ms + 7 * DAY,
        CalendarUnit::Month => months(1),
        CalendarUnit::Quarter => months(3),
        CalendarUnit::Year => months(12),
    }
}

fn finish(agg: &Aggregation, state: State) -> Value {
    let field = agg.field();
    match (state, &agg.kind) {
        (State::Metric { count, sum, min, max }, AggKind::Metric(metric, _)) => {
            let some = |x: f64| if count > 0 { json!(x) } else { Value::Null };
            let mut out = match metric {
                Metric::Min => json!({"value": some(min)}),
                Metric::Max => json!({"value": some(max)}),
                Metric::Sum => json!({"value": sum}),
                Metric::Avg => json!({"value": some(sum / count as f64)}),
                Metric::ValueCount => json!({"value": count}),
                Metric::Stats => {
                    json!({"count": count, "min": some(min), "max": some(max), "avg": some(sum / count as f64), "sum": sum})
                }
            };
            if field.kind == FieldKind::Date && count > 0 {
                let shown = match metric {
                    Metric::Min => Some(min),
                    Metric::Max => Some(max),
                    _ => None,
                };
                if let Some(ms) = shown {
                    out["value_as_string"] = json!(date_string(ms as i64));
                }
            }
            out
        }
        (State::Ranges(buckets), AggKind::Range { ranges, .. }) => {
            let shown = buckets.into_iter().zip(ranges).map(|(bucket, range)| {
                let bound = |b: Option<f64>| b.map_or("*".to_string(), |x| format!("{x:?}"));
                let key =
                    range.key.clone().unwrap_or_else(|| format!("{}-{}", bound(range.from), bound(range.to)));
                let mut b = Map::new();
                b.insert("key".into(), json!(key));
                if let Some(from) = range.from {
                    b.insert("from".into(), json!(from));
                }
                if let Some(to) = range.to {
                    b.insert("to".into(), json!(to));
                }
                bucket_json(agg, b, bucket)
            });
            json!({"buckets": shown.collect::<Vec<_>>()})
        }
        (State::Keyed(buckets), kind) => keyed_json(agg, kind, field, buckets),
        (State::Named(buckets), AggKind::Terms { size, min_doc_count, order, .. }) => {
            let key =
                |k: Arc<[u8]>| Map::from_iter([("key".to_string(), json!(String::from_utf8_lossy(&k)))]);
            terms_json(agg, buckets.into_iter().collect(), *size, *min_doc_count, *order, key)
        }
        _ => unreachable!("states are made for their aggregations"),
    }
}

fn keyed_json(
    agg: &Aggregation,
    kind: &AggKind,
    field: AggField,
    mut buckets: BTreeMap<i64, Bucket>,
) -> Value {
    let key_json = |key: i64| -> Map<String, Value> {
        let mut b = Map::new();
        match kind {
            AggKind::Histogram { .. } => {
                b.insert("key".into(), json!(sortable_to_double(key)));
            }
            _ if field.kind == FieldKind::Double => {
                b.insert("key".into(), json!(sortable_to_double(key)));
            }
            _ => {
                b.insert("key".into(), json!(key));
            }
        }
        match field.kind {
            FieldKind::Date => {
                b.insert("key_as_string".into(), json!(date_string(key)));
            }
            FieldKind::Boolean => {
                b.insert("key_as_string".into(), json!(if key == 1 { "true" } else { "false" }));
            }
            _ => {}
        }
        b
    };
    match kind {
        AggKind::Terms { size, min_doc_count, order, .. } => {
            terms_json(agg, buckets.into_iter().collect(), *size, *min_doc_count, *order, key_json)
        }
        AggKind::Histogram { interval, min_doc_count, .. } => {
            if *min_doc_count == 0 {
                fill_gaps(&mut buckets, agg, |k| double_to_sortable(sortable_to_double(k) + interval));
            }
            let shown = buckets.into_iter().filter(|(_, b)| b.count >= *min_doc_count);
            json!({"buckets": shown.map(|(k, b)| bucket_json(agg, key_json(k), b)).collect::<Vec<_>>()})
        }
        AggKind::DateHistogram { interval, min_doc_count, .. } => {
            if *min_doc_count == 0 {
                fill_gaps(&mut buckets, agg, |k| match interval {
                    DateInterval::Fixed(ms) => k.saturating_add(*ms),
                    DateInterval::Calendar(unit) => calendar_next(*unit, k),
                });
            }
            let shown = buckets.into_iter().filter(|(_, b)| b.count >= *min_doc_count);
            json!({"buckets": shown.map(|(k, b)| bucket_json(agg, key_json(k), b)).collect::<Vec<_>>()})
        }
        _ => unreachable!("only terms and histograms are keyed"),
    }
}

/// A `terms` answer: buckets ordered as asked (keys by their own order:
/// column values, or keywords' bytes), the first `size` shown.
fn terms_json<K: Ord>(
    agg: &Aggregation,
    mut all: Vec<(K, Bucket)>,
    size: usize,
    min_doc_count: u64,
    order: TermsOrder,
    key_json: impl Fn(K) -> Map<String, Value>,
) -> Value {
    all.retain(|(_, b)| b.count >= min_doc_count);
    all.sort_by(|(ka, a), (kb, b)| match order {
        TermsOrder::CountDesc => b.count.cmp(&a.count).then(ka.cmp(kb)),
        TermsOrder::CountAsc => a.count.cmp(&b.count).then(ka.cmp(kb)),
        TermsOrder::KeyAsc => ka.cmp(kb),
        TermsOrder::KeyDesc => kb.cmp(ka),
    });
    let other: u64 = all.iter().skip(size).map(|(_, b)| b.count).sum();
    let shown: Vec<Value> =
        all.into_iter().take(size).map(|(k, b)| bucket_json(agg, key_json(k), b)).collect();
    json!({"doc_count_error_upper_bound": 0, "sum_other_doc_count": other, "buckets": shown})
}

/// Adds the empty buckets between the first and the last (Elasticsearch's
/// histograms show them when `min_doc_count` is 0), at most a million.
fn fill_gaps(buckets: &mut BTreeMap<i64, Bucket>, agg: &Aggregation, next: impl Fn(i64) -> i64) {
    let (Some(&first), Some(&last)) = (buckets.keys().next(), buckets.keys().next_back()) else { return };
    let mut key = first;
    for _ in 0..1_000_000 {
        key = next(key);
        if key >= last {
            break;
        }
        buckets.entry(key).or_insert_with(|| new_bucket(agg));
    }
}

fn bucket_json(agg: &Aggregation, mut b: Map<String, Value>, bucket: Bucket) -> Value {
    b.insert("doc_count".into(), json!(bucket.count));
    for (sub, state) in agg.subs.iter().zip(bucket.subs) {
        b.insert(sub.name.clone(), finish(sub, state));
    }
    Value::Object(b)
}

/// Milliseconds as Elasticsearch shows a date: `2024-03-05T00:00:00.000Z`.
pub fn date_string(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map_or_else(|| ms.to_string(), |d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::parse_date;

    #[test]
    fn calendar_units_start_where_elasticsearch_starts_them() {
        let at = |s: &str| parse_date(s, false).unwrap();
        let t = at("2024-08-15T13:45:12Z");
        assert_eq!(calendar_floor(CalendarUnit::Week, t), at("2024-08-12"), "a Monday");
        assert_eq!(calendar_floor(CalendarUnit::Month, t), at("2024-08-01"));
        assert_eq!(calendar_floor(CalendarUnit::Quarter, t), at("2024-07-01"));
        assert_eq!(calendar_floor(CalendarUnit::Year, at("1790-01-08")), at("1790-01-01"));
        assert_eq!(calendar_next(CalendarUnit::Month, at("2024-01-01")), at("2024-02-01"));
        assert_eq!(calendar_floor(CalendarUnit::Week, at("1969-12-31")), at("1969-12-29"));
        assert_eq!(date_string(at("2024-03-05")), "2024-03-05T00:00:00.000Z");
    }
}
