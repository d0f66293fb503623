//! Aggregations: summaries of the documents a query matches, computed in one
//! pass over them from their doc values, answered in Elasticsearch's shapes
//! (`{"value": ...}` for a metric, `{"buckets": [...]}` for a bucketing).
//!
//! Metrics: `min`, `max`, `sum`, `avg`, `stats`, `value_count`, `cardinality`
//! (distinct values, exact up to a threshold, then estimated: `distinct.rs`). Buckets:
//! `histogram` (`interval`, `offset`), `date_histogram` (a fixed interval in
//! milliseconds, or a calendar unit, in a time zone's wall-clock time: `zone.rs`;
//! an offset), both with extended and hard bounds, `range` (`from` inclusive, `to`
//! exclusive), `terms` on keyword, numeric, date and boolean fields, `filter`/`filters`
//! (the documents a query matches, found before the pass: [`filter_queries`]); each bucket may
//! hold sub-aggregations. A document with several values counts once in each
//! bucket one of them falls in; metrics count every value; with a `missing`
//! stand-in, a document without a value counts as having it. `top_hits` keeps
//! each bucket's best hits by score or sort keys during the pass; only the
//! buckets answered fetch theirs, through the caller's [`FetchTopHits`].

use std::cell::RefCell;
use std::collections::BTreeMap;

use std::sync::Arc;

use needle_codecs::doc_values::{
    double_to_sortable, sortable_to_double, KeywordValues, NumericValues, ValueBatch,
};
use needle_codecs::SegmentRead;
use needle_core::{DocId, Error, FieldId, Result};
use needle_search::{
    MatchVisitor, ScoredDoc, SortBy, SortColumns, SortKey, SortedHit, SortedTop, MATCH_BATCH,
};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Map, Value};

use crate::date_format::DateFormat;
use crate::decimal_format::DecimalFormat;
use crate::distinct::{hash_bytes, hash_value, Distinct};
use crate::schema::FieldKind;
use crate::zone::Zone;
use crate::{Hit, Query, SearchRequest};

pub(crate) mod counted;
mod dense;
mod grid;
mod keyed;
mod tally;
mod wire;
use dense::{extremes, Step, Sums};
use keyed::KeyedBuckets;
use tally::Tally;

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

/// Which terms a `terms` aggregation keeps: those `include` names (all
/// when `None`) that `exclude` does not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TermsFilter {
    pub include: Option<TermsPattern>,
    pub exclude: Option<TermsPattern>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TermsPattern {
    /// A Lucene regular expression a keyword matches whole.
    Regexp(String),
    /// Exact keywords.
    Keywords(Vec<String>),
    /// Exact numbers (numeric, date and boolean fields: milliseconds for dates, 1 for true).
    Numbers(Vec<f64>),
    /// The terms whose hash falls in partition `partition` of `of`, as
    /// Elasticsearch hashes them: an application pages through many terms
    /// one partition a request.
    Partition { partition: u32, of: u32 },
}

/// A pattern made ready to test terms.
enum TermsTest<'a> {
    Regexp(needle_search::regexp::RegexpMatcher),
    Keywords(FxHashSet<&'a [u8]>),
    Numbers(&'a [f64]),
    Partition { partition: u32, of: u32 },
}

/// Lucene's seed for hashing terms into partitions (`HASH_PARTITIONING_SEED`).
const PARTITION_SEED: u32 = 31;

/// The 64-bit mix Elasticsearch hashes numbers into partitions with (HPPC's `BitMixer.mix64`).
fn mix64(z: i64) -> i64 {
    let z = (z ^ (z as u64 >> 32) as i64).wrapping_mul(0x4cd6_944c_5cc2_0b6d);
    let z = (z ^ (z as u64 >> 29) as i64).wrapping_mul(0xfc12_c5b1_9d32_59e9_u64 as i64);
    z ^ (z as u64 >> 32) as i64
}

impl<'a> TermsTest<'a> {
    fn of(pattern: &'a TermsPattern) -> Result<Self> {
        use needle_search::regexp::{RegexpFlags, RegexpMatcher};
        Ok(match pattern {
            TermsPattern::Regexp(r) => TermsTest::Regexp(
                RegexpMatcher::new(r, RegexpFlags::ALL, false)
                    .map_err(|e| Error::invalid(format!("[terms] {e}")))?,
            ),
            TermsPattern::Keywords(list) => TermsTest::Keywords(list.iter().map(|k| k.as_bytes()).collect()),
            TermsPattern::Numbers(list) => TermsTest::Numbers(list),
            &TermsPattern::Partition { partition, of } => TermsTest::Partition { partition, of },
        })
    }

    fn keyword(&self, term: &[u8]) -> bool {
        use needle_codecs::TermMatcher;
        match self {
            TermsTest::Regexp(m) => m.matches(term),
            TermsTest::Keywords(set) => set.contains(term),
            TermsTest::Numbers(_) => false,
            &TermsTest::Partition { partition, of } => {
                let hash = murmur3::murmur3_32(&mut std::io::Cursor::new(term), PARTITION_SEED).unwrap_or(0);
                (hash as i32).rem_euclid(of as i32) == partition as i32
            }
        }
    }

    /// Whether `field`'s column value `key` passes: numbers compared bit for
    /// bit, as Elasticsearch compares (-0.0 is not 0.0); partitions by the
    /// column value (a double's sortable bits), as Elasticsearch hashes it.
    fn number(&self, key: i64, field: AggField) -> bool {
        match self {
            TermsTest::Numbers(list) => list.iter().any(|v| v.to_bits() == field.number(key).to_bits()),
            &TermsTest::Partition { partition, of } => {
                mix64(key).rem_euclid(i64::from(of)) == i64::from(partition)
            }
            _ => false,
        }
    }
}

impl TermsFilter {
    /// What keeps a term, given how to test one against a pattern.
    fn keeper<'a, T: ?Sized>(
        &'a self,
        test: impl Fn(&TermsTest<'a>, &T) -> bool + 'a,
    ) -> Result<impl Fn(&T) -> bool + 'a> {
        let include = self.include.as_ref().map(TermsTest::of).transpose()?;
        let exclude = self.exclude.as_ref().map(TermsTest::of).transpose()?;
        Ok(move |term: &T| {
            include.as_ref().is_none_or(|t| test(t, term)) && !exclude.as_ref().is_some_and(|t| test(t, term))
        })
    }
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
    Histogram {
        field: AggField,
        interval: f64,
        offset: f64,
        min_doc_count: u64,
        /// With `min_doc_count` 0, the buckets from the one of the first
        /// value to the one of the second are shown, empty or not.
        extended_bounds: Option<(f64, f64)>,
        /// (min, max), infinite on an open side: a value counts only where
        /// `min <= floor((value - offset) / interval) * interval <= max`
        /// (Elasticsearch's test, on the bucket's start before the offset).
        hard_bounds: Option<(f64, f64)>,
    },
    DateHistogram {
        field: AggField,
        interval: DateInterval,
        /// Milliseconds the buckets start after the interval's start (may be negative).
        offset: i64,
        min_doc_count: u64,
        /// Buckets are cut in this zone's wall-clock time (see `zone.rs`).
        zone: Zone,
        /// As a histogram's, in milliseconds.
        extended_bounds: Option<(i64, i64)>,
        /// (min, max) in milliseconds, `i64::MIN`/`i64::MAX` on an open side:
        /// each stands for the key of its bucket (see `AggKind::bound_key`),
        /// and a value counts only where `min <= its bucket's key < max`.
        hard_bounds: Option<(i64, i64)>,
    },
    Range {
        field: AggField,
        ranges: Vec<RangeSpec>,
    },
    Terms {
        field: AggField,
        size: usize,
        min_doc_count: u64,
        order: TermsOrder,
        /// The terms kept (`include`/`exclude`); the others are not counted anywhere.
        filter: TermsFilter,
    },
    /// Distinct values: exact up to `precision_threshold`, estimated past it (see `distinct.rs`).
    Cardinality {
        field: AggField,
        precision_threshold: usize,
    },
    /// A bucket of the documents each query matches: `filter` (one, answered
    /// as the bucket itself) or `filters` (named, or a list), and with
    /// `other` a last bucket, under that name, of those matching none.
    Filters {
        filters: Vec<(String, Query)>,
        shape: FiltersShape,
        other: Option<String>,
    },
    /// The bucket's best hits: `request`'s `from`, `top_k` (from + size),
    /// `sort` (empty: by score) and what to fetch of each hit; `tag` is
    /// the caller's, handed back with the hits to answer with.
    TopHits {
        request: Box<SearchRequest>,
        tag: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FiltersShape {
    /// `filter`: `{"doc_count": ...}`.
    One,
    /// `filters` given as an object: buckets by name.
    Keyed,
    /// `filters` given as a list: buckets in order.
    Listed,
}

/// A named aggregation and its sub-aggregations (computed per bucket).
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregation {
    pub name: String,
    pub kind: AggKind,
    pub subs: Vec<Aggregation>,
    /// How the field's values are shown (`key_as_string`,
    /// `value_as_string`, a range's `from_as_string`); `None`: a date as
    /// `strict_date_optional_time`, a number not as text.
    pub format: Option<ValueFormat>,
    /// What a matching document without a value of the field counts as
    /// (Elasticsearch's `missing`); `None`: it is not counted.
    pub missing: Option<Missing>,
}

/// How an aggregation shows its field's values as text.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueFormat {
    Date(DateFormat),
    Decimal(DecimalFormat),
}

/// The value an aggregation gives a document that has none: a column value
/// (numeric, date and boolean fields) or a keyword. A keyword equal to a
/// value some documents have shares their bucket.
#[derive(Debug, Clone, PartialEq)]
pub enum Missing {
    Value(i64),
    Term(Arc<[u8]>),
}

impl Aggregation {
    /// A date as this aggregation shows it, in `zone`.
    fn date_text(&self, ms: i64, zone: Zone) -> String {
        match &self.format {
            Some(ValueFormat::Date(format)) => format.format(ms, zone),
            _ => zone.format(ms),
        }
    }

    /// A number as this aggregation's `format` shows it (`None`: no format).
    fn number_text(&self, x: f64) -> Option<String> {
        match &self.format {
            Some(ValueFormat::Decimal(format)) => Some(format.format(x)),
            _ => None,
        }
    }

    /// A column value (a key) of `field` as the `format` shows it: a long exactly.
    fn key_text(&self, field: AggField, key: i64) -> Option<String> {
        match (&self.format, field.kind) {
            (Some(ValueFormat::Decimal(format)), FieldKind::Double) => {
                Some(format.format(sortable_to_double(key)))
            }
            (Some(ValueFormat::Decimal(format)), _) => Some(format.format_long(key)),
            _ => None,
        }
    }

    /// The field it reads (none for filters).
    fn field(&self) -> Option<AggField> {
        match &self.kind {
            AggKind::Metric(_, f) => Some(*f),
            AggKind::Histogram { field, .. }
            | AggKind::DateHistogram { field, .. }
            | AggKind::Range { field, .. }
            | AggKind::Terms { field, .. }
            | AggKind::Cardinality { field, .. } => Some(*field),
            AggKind::Filters { .. } | AggKind::TopHits { .. } => None,
        }
    }

    fn field_mut(&mut self) -> Option<&mut AggField> {
        match &mut self.kind {
            AggKind::Metric(_, f) => Some(f),
            AggKind::Histogram { field, .. }
            | AggKind::DateHistogram { field, .. }
            | AggKind::Range { field, .. }
            | AggKind::Terms { field, .. }
            | AggKind::Cardinality { field, .. } => Some(field),
            AggKind::Filters { .. } | AggKind::TopHits { .. } => None,
        }
    }

    /// Whether it, or one below, ranks hits by score.
    pub(crate) fn needs_scores(&self) -> bool {
        let own = match &self.kind {
            AggKind::TopHits { request, .. } => top_hits_scored(request),
            _ => false,
        };
        own || self.subs.iter().any(Aggregation::needs_scores)
    }
}

/// Whether a `top_hits` computes scores: ranked by them, or asked to track them.
fn top_hits_scored(request: &SearchRequest) -> bool {
    request.sort.is_empty() || request.track_scores || request.sort.iter().any(|k| k.by == SortBy::Score)
}

/// A `top_hits`' ranking keys: its sort, or the score (best first).
fn top_hits_keys(request: &SearchRequest) -> Vec<SortKey> {
    match request.sort.is_empty() {
        true => vec![SortKey { by: SortBy::Score, descending: true }],
        false => request.sort.clone(),
    }
}

/// What a `top_hits` found in one bucket, before the fetch: the bucket's
/// documents, its best score, and its best hits (by its keys) in rank order.
pub(crate) struct FoundHits {
    pub total: u64,
    pub max_score: Option<f32>,
    pub hits: Vec<SortedHit>,
}

/// What a `top_hits` aggregation answers for one bucket: its documents,
/// their best score (when scored) and its best hits, fetched.
#[derive(Debug, Clone)]
pub struct TopHits {
    pub total: u64,
    pub max_score: Option<f32>,
    pub hits: Vec<Hit>,
}

impl TopHits {
    /// Elasticsearch's shape, each hit as the engine shows one.
    pub fn json(self) -> Value {
        json!({"hits": {
            "total": {"value": self.total, "relation": "eq"},
            "max_score": self.max_score,
            "hits": self.hits,
        }})
    }
}

/// Turns a bucket's [`FoundHits`] of a `top_hits` aggregation into its answer.
pub(crate) type FetchTopHits<'a> = dyn FnMut(&SearchRequest, usize, FoundHits) -> Result<Value> + 'a;

/// The queries of the `filter`/`filters` aggregations in `aggs`, each
/// aggregation's before its sub-aggregations': the order [`aggregate`] expects
/// their matches in.
pub(crate) fn filter_queries(aggs: &[Aggregation]) -> Vec<&Query> {
    let mut out = Vec::new();
    for agg in aggs {
        if let AggKind::Filters { filters, .. } = &agg.kind {
            out.extend(filters.iter().map(|(_, q)| q));
        }
        out.extend(filter_queries(&agg.subs));
    }
    out
}

/// The documents one filter matches: a bit per document, by segment.
pub(crate) type Matches = Vec<Vec<u64>>;

/// What an aggregation has gathered so far.
#[derive(Debug, Clone)]
enum State {
    Metric(Sums),
    /// Buckets by key (histogram keys as sortable doubles, so they sort as the doubles).
    Keyed(KeyedBuckets),
    /// Buckets by keyword: those of the segments walked so far by value, the
    /// current segment's by value id (a vector index, not a lookup by bytes),
    /// moved into the first at the end of each segment ([`State::end_segment`]).
    Named {
        done: BTreeMap<Arc<[u8]>, Bucket>,
        by_id: Vec<Option<Bucket>>,
        /// The current segment's counts by value id, without sub-aggregations.
        tally: Tally,
    },
    Ranges(Vec<Bucket>),
    /// Distinct values so far, and (keywords) the value ids met in the current segment.
    Distinct {
        seen: Distinct,
        ids: FxHashSet<i64>,
    },
    /// A `top_hits`' documents, best score (NaN: none yet) and best hits.
    Top {
        total: u64,
        max_score: f32,
        top: SortedTop,
    },
}

#[derive(Debug, Clone, Default)]
struct Bucket {
    count: u64,
    subs: Vec<State>,
}

fn fresh(agg: &Aggregation) -> State {
    match &agg.kind {
        AggKind::Metric(..) => State::Metric(Sums::NONE),
        AggKind::Range { ranges, .. } => State::Ranges(ranges.iter().map(|_| new_bucket(agg)).collect()),
        AggKind::Filters { filters, other, .. } => State::Ranges(
            (0..filters.len() + usize::from(other.is_some())).map(|_| new_bucket(agg)).collect(),
        ),
        AggKind::Cardinality { precision_threshold, .. } => {
            State::Distinct { seen: Distinct::new(*precision_threshold), ids: FxHashSet::default() }
        }
        AggKind::TopHits { request, .. } => State::Top {
            total: 0,
            max_score: f32::NAN,
            top: SortedTop::new(top_hits_keys(request), request.top_k),
        },
        AggKind::Terms { field, .. } if field.kind == FieldKind::Keyword => {
            State::Named { done: BTreeMap::new(), by_id: Vec::new(), tally: Tally::default() }
        }
        _ => State::Keyed(KeyedBuckets::default()),
    }
}

impl State {
    /// Adds what `other` gathered (the same aggregation's state) to this one.
    fn merge(&mut self, other: State) {
        match (self, other) {
            (State::Metric(sums), State::Metric(other)) => sums.merge(other),
            (State::Keyed(mine), State::Keyed(theirs)) => mine.merge(theirs),
            (State::Named { done, .. }, State::Named { done: theirs, .. }) => {
                theirs.into_iter().for_each(|(k, b)| merge_into(done, k, b))
            }
            (State::Ranges(mine), State::Ranges(theirs)) => {
                mine.iter_mut().zip(theirs).for_each(|(a, b)| a.merge(b))
            }
            (State::Distinct { seen, .. }, State::Distinct { seen: theirs, .. }) => seen.merge(theirs),
            (State::Top { total, max_score, top }, State::Top { total: t, max_score: m, top: theirs }) => {
                *total += t;
                *max_score = max_score.max(m);
                theirs.into_hits().into_iter().for_each(|h| top.offer(h));
            }
            _ => unreachable!("merged states are of one aggregation"),
        }
    }

    /// Moves the current segment's keyword buckets (here and in every bucket
    /// below) to their values, with the terms of the segment ending.
    fn end_segment(&mut self, plan: &Plan, batch: &Batch) {
        match self {
            State::Named { done, by_id, tally } => {
                for (id, count) in tally.drain() {
                    // Counted so only without sub-aggregations: a bucket is its count.
                    id_bucket(by_id, id as i64, Bucket::default).count += count;
                }
                for (id, bucket) in std::mem::take(by_id).into_iter().enumerate() {
                    if let Some(mut bucket) = bucket {
                        bucket.end_segment(plan, batch);
                        merge_into(done, batch.term(plan.slot, id), bucket);
                    }
                }
                done.values_mut().for_each(|b| b.end_segment(plan, batch));
            }
            State::Keyed(buckets) => {
                buckets.end_segment();
                buckets.buckets_mut().for_each(|b| b.end_segment(plan, batch))
            }
            State::Ranges(buckets) => buckets.iter_mut().for_each(|b| b.end_segment(plan, batch)),
            // A keyword's value ids mean nothing past their segment: count their bytes.
            State::Distinct { seen, ids } => {
                ids.drain().for_each(|id| seen.insert(hash_bytes(&batch.term(plan.slot, id as usize))))
            }
            State::Metric(_) | State::Top { .. } => {}
        }
    }
}

impl Bucket {
    /// A bucket of `count` documents whose sub-aggregations, all metrics, summed to `sums`.
    fn of_metrics(count: u64, sums: Vec<Sums>) -> Bucket {
        Bucket { count, subs: sums.into_iter().map(State::Metric).collect() }
    }

    fn merge(&mut self, other: Bucket) {
        self.count += other.count;
        self.subs.iter_mut().zip(other.subs).for_each(|(a, b)| a.merge(b));
    }

    fn end_segment(&mut self, plan: &Plan, batch: &Batch) {
        for (state, sub) in self.subs.iter_mut().zip(&plan.subs) {
            state.end_segment(sub, batch);
        }
    }
}

fn merge_into<K: Ord>(buckets: &mut BTreeMap<K, Bucket>, key: K, bucket: Bucket) {
    match buckets.entry(key) {
        std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().merge(bucket),
        std::collections::btree_map::Entry::Vacant(e) => {
            e.insert(bucket);
        }
    }
}

fn new_bucket(agg: &Aggregation) -> Bucket {
    Bucket { count: 0, subs: agg.subs.iter().map(fresh).collect() }
}

/// Where each aggregation reads its field in a [`Row`]: a slot per
/// aggregation, the sub-aggregations' in `subs` (mirroring the tree).
struct Plan {
    /// Where its field's values are (none for filters).
    slot: usize,
    /// A filters aggregation's queries' places in `Row::filters`.
    filters: std::ops::Range<usize>,
    /// A `top_hits`' place in `Row::tops`.
    top: usize,
    subs: Vec<Plan>,
    /// A calendar histogram's buckets met so far.
    spans: RefCell<Spans>,
    /// Buffers of [`grouped`], kept from one batch to the next.
    grouping: RefCell<Grouping>,
}

/// The doc values of a batch of matches (of one segment), for every field
/// the aggregations read, each read once per batch into a buffer reused
/// from one batch to the next.
#[derive(Default)]
struct Batch {
    /// (field, keyword?, what a document without a value reads as) of each slot.
    slots: Vec<(FieldId, bool, Option<Missing>)>,
    /// Each slot's stand-in for a missing value in the current segment: the
    /// value, or for a keyword an id past the segment's own.
    missing_ids: Vec<Option<i64>>,
    /// Each slot's values for the batch's documents: numbers, or a keyword slot's value ids.
    values: Vec<ValueBatch>,
    segment: Option<usize>,
    numeric: Vec<Option<Box<dyn NumericValues + Send>>>,
    keyword: Vec<Option<Box<dyn KeywordValues + Send>>>,
    /// The documents each filter query matches.
    filters: Vec<Matches>,
    /// The batch's documents and their scores (NaN when none is computed).
    docs: Vec<DocId>,
    scores: Vec<f32>,
    /// Where each segment starts in the index (its first document's place).
    bases: Vec<u64>,
    /// Each `top_hits`' ranking keys, and their columns in the current segment.
    tops: Vec<Vec<SortKey>>,
    top_columns: RefCell<Vec<SortColumns>>,
}

impl Batch {
    /// Where `agg` reads; `filters` counts the filter queries planned so far.
    fn plan(&mut self, agg: &Aggregation, filters: &mut usize) -> Plan {
        let slot = match agg.field() {
            None => usize::MAX,
            Some(field) => {
                let key = (field.id, field.kind == FieldKind::Keyword, agg.missing.clone());
                self.slots.iter().position(|s| *s == key).unwrap_or_else(|| {
                    self.slots.push(key);
                    self.slots.len() - 1
                })
            }
        };
        let first = *filters;
        if let AggKind::Filters { filters: queries, .. } = &agg.kind {
            *filters += queries.len();
        }
        let top = match &agg.kind {
            AggKind::TopHits { request, .. } => {
                self.tops.push(top_hits_keys(request));
                self.tops.len() - 1
            }
            _ => usize::MAX,
        };
        let subs = agg.subs.iter().map(|s| self.plan(s, filters)).collect();
        Plan {
            slot,
            filters: first..*filters,
            top,
            subs,
            spans: Default::default(),
            grouping: Default::default(),
        }
    }

    /// Whether the batch's document `row` matches filter query `i`.
    fn in_filter(&self, i: usize, row: u32) -> bool {
        let (seg, doc) = (self.segment.unwrap_or(0), self.docs[row as usize] as usize);
        self.filters[i]
            .get(seg)
            .and_then(|bits| bits.get(doc / 64))
            .is_some_and(|w| w & (1 << (doc % 64)) != 0)
    }

    /// Whether `seg` is another segment than the one walked so far.
    fn is_new(&self, seg: usize) -> bool {
        self.segment != Some(seg)
    }

    /// Opens the columns of segment `seg`.
    fn enter(&mut self, seg: usize, segment: &dyn SegmentRead) {
        self.segment = Some(seg);
        self.numeric =
            self.slots.iter().map(|&(f, k, _)| (!k).then(|| segment.numeric_values(f)).flatten()).collect();
        self.keyword =
            self.slots.iter().map(|&(f, k, _)| k.then(|| segment.keyword_values(f)).flatten()).collect();
        // A stand-in of the other sort than the slot's (a field mapped
        // differently in another index) stands for nothing.
        self.missing_ids = (self.slots.iter().zip(&self.keyword))
            .map(|((_, keyword, missing), column)| match (missing, keyword) {
                (Some(Missing::Value(v)), false) => Some(*v),
                (Some(Missing::Term(_)), true) => Some(column.as_ref().map_or(0, |c| c.term_count() as i64)),
                _ => None,
            })
            .collect();
        self.values.resize_with(self.slots.len(), ValueBatch::default);
        *self.top_columns.get_mut() = self.tops.iter().map(|keys| SortColumns::open(keys, segment)).collect();
    }

    /// Reads the values of `docs` (of the current segment) for every slot.
    fn load(&mut self, docs: &[DocId], scores: &[f32]) {
        self.docs.clear();
        self.docs.extend_from_slice(docs);
        self.scores.clear();
        self.scores.extend_from_slice(scores);
        for slot in 0..self.slots.len() {
            let out = &mut self.values[slot];
            match (self.numeric[slot].as_mut(), self.keyword[slot].as_mut()) {
                (Some(c), _) => c.fill(docs, out),
                (_, Some(c)) => c.fill_ids(docs, out),
                _ => {
                    out.clear();
                    docs.iter().for_each(|_| out.push(&[]));
                }
            }
            if let Some(stand_in) = self.missing_ids[slot] {
                out.fill_empty(stand_in);
            }
        }
    }

    /// The batch's document `row` as a hit.
    fn hit(&self, row: u32, score: f32) -> ScoredDoc {
        let seg = self.segment.unwrap_or(0);
        let doc = self.docs[row as usize];
        let global = self.bases.get(seg).copied().unwrap_or(0) + u64::from(doc);
        ScoredDoc { segment: seg, doc, global, score }
    }

    /// The value of keyword value id `id` of `slot` in the current segment.
    fn term(&self, slot: usize, id: usize) -> Arc<[u8]> {
        if let (Some(Missing::Term(term)), Some(stand_in)) = (&self.slots[slot].2, self.missing_ids[slot]) {
            if stand_in == id as i64 {
                return term.clone();
            }
        }
        self.keyword[slot].as_ref().map_or_else(|| Arc::from(&[][..]), |c| c.term(id as i64))
    }
}

/// What aggregations gathered over one index's matches, before they are
/// answered: merged with what the same aggregations gathered in other indexes
/// ([`Gathered::merge`]), then answered ([`Gathered::answer`]).
pub struct Gathered {
    /// The matches walked.
    pub total: u64,
    states: Vec<State>,
}

impl Gathered {
    /// Adds what the same aggregations gathered in another index (read
    /// against its schema, their fields' kinds made one by [`unify_fields`]).
    pub fn merge(&mut self, other: Gathered) {
        self.total += other.total;
        self.states.iter_mut().zip(other.states).for_each(|(a, b)| a.merge(b));
    }

    /// The `aggregations` object of an Elasticsearch response, or an error
    /// when they would answer with more than [`MAX_BUCKETS`] buckets.
    /// `fetch` answers each `top_hits` shown.
    pub(crate) fn answer_with(
        self,
        aggs: &[Aggregation],
        fetch: &mut FetchTopHits<'_>,
    ) -> Result<Map<String, Value>> {
        let buckets: u64 = aggs.iter().zip(&self.states).map(|(a, s)| bucket_count(a, s)).sum();
        if buckets > MAX_BUCKETS {
            return Err(Error::invalid(format!(
                "Trying to create too many buckets. Must be less than or equal to: [{MAX_BUCKETS}] but was [{buckets}]. \
                 This limit can be set by changing the [search.max_buckets] cluster level setting."
            )));
        }
        aggs.iter().zip(self.states).map(|(a, s)| Ok((a.name.clone(), finish(a, s, fetch)?))).collect()
    }

    /// [`Gathered::answer_with`] for aggregations without `top_hits` (whose
    /// hits belong to one index): what several indexes gathered, merged.
    pub fn answer(self, aggs: &[Aggregation]) -> Result<Map<String, Value>> {
        self.answer_with(aggs, &mut |_, _, _| {
            Err(Error::invalid("[top_hits] over several indexes is not supported yet by Needle"))
        })
    }
}

/// Runs `aggs` over every match: `walk` calls its visitor with each batch of
/// matching documents (segment number, segment, documents, scores: NaN unless
/// some aggregation [`needs_scores`](Aggregation::needs_scores)) and returns
/// their count. `filters`: what each query of [`filter_queries`] matches;
/// `bases`: where each segment starts in the index.
pub(crate) fn gather(
    aggs: &[Aggregation],
    filters: Vec<Matches>,
    bases: Vec<u64>,
    walk: impl FnOnce(&mut MatchVisitor<'_>) -> Result<u64>,
) -> Result<Gathered> {
    let mut states: Vec<State> = aggs.iter().map(fresh).collect();
    let mut batch = Batch { filters, bases, ..Batch::default() };
    let mut planned = 0;
    let plans: Vec<Plan> = aggs.iter().map(|a| batch.plan(a, &mut planned)).collect();
    let end_segment = |states: &mut Vec<State>, batch: &Batch| {
        states.iter_mut().zip(&plans).for_each(|(s, p)| s.end_segment(p, batch));
    };
    let every_row: Vec<u32> = (0..MATCH_BATCH as u32).collect();
    let total = walk(&mut |seg, segment, docs, scores| {
        if batch.is_new(seg) {
            end_segment(&mut states, &batch);
            batch.enter(seg, segment);
        }
        batch.load(docs, scores);
        let rows = &every_row[..docs.len()];
        for ((agg, plan), state) in aggs.iter().zip(&plans).zip(states.iter_mut()) {
            collect(agg, plan, state, &batch, rows);
        }
    })?;
    end_segment(&mut states, &batch);
    needle_core::read_error::check()?;
    Ok(Gathered { total, states })
}

/// Makes `trees` (the same aggregations, each read against another index's
/// schema) agree on their fields' kinds, so that what they gather merges: a
/// field one index does not map (no values there) takes the kind the others
/// map it with. A field mapped with different kinds is an error.
pub fn unify_fields(trees: &mut [Vec<Aggregation>]) -> Result<()> {
    fn kinds(aggs: &[Aggregation], out: &mut Vec<(String, Option<FieldKind>)>) {
        for agg in aggs {
            let mapped = agg.field().filter(|f| f.id != FieldId::MAX).map(|f| f.kind);
            out.push((agg.name.clone(), mapped));
            kinds(&agg.subs, out);
        }
    }
    fn set(aggs: &mut [Aggregation], agreed: &[Option<FieldKind>], at: &mut usize) {
        for agg in aggs {
            if let (Some(field), Some(kind)) = (agg.field_mut(), agreed[*at]) {
                field.kind = kind;
            }
            *at += 1;
            set(&mut agg.subs, agreed, at);
        }
    }
    let mut agreed: Vec<Option<FieldKind>> = Vec::new();
    for tree in trees.iter() {
        let mut found = Vec::new();
        kinds(tree, &mut found);
        agreed.resize(found.len(), None);
        for ((name, kind), seen) in found.into_iter().zip(agreed.iter_mut()) {
            match (kind, *seen) {
                (Some(a), Some(b)) if a != b => {
                    return Err(Error::invalid(format!(
                    "the field of aggregation [{name}] is mapped as [{}] in one index and [{}] in another: \
                         aggregate one index at a time",
                    a.name(),
                    b.name()
                )))
                }
                (Some(a), _) => *seen = Some(a),
                _ => {}
            }
        }
    }
    trees.iter_mut().for_each(|tree| set(tree, &agreed, &mut 0));
    Ok(())
}

/// The most buckets one search's aggregations may answer with (Elasticsearch's `search.max_buckets`).
pub const MAX_BUCKETS: u64 = 65_536;

/// The buckets `state` would answer with: those gathered, the empty ones a
/// histogram adds between them, and all below.
fn bucket_count(agg: &Aggregation, state: &State) -> u64 {
    let below = |b: &Bucket| -> u64 { agg.subs.iter().zip(&b.subs).map(|(a, s)| bucket_count(a, s)).sum() };
    match (state, &agg.kind) {
        (State::Metric(_), _) => 0,
        (State::Ranges(buckets), _) => buckets.iter().map(|b| 1 + below(b)).sum(),
        (State::Named { done, .. }, AggKind::Terms { size, .. }) => {
            done.len().min(*size) as u64 + done.values().map(below).sum::<u64>()
        }
        (State::Keyed(buckets), kind) => {
            let gathered = match kind {
                AggKind::Terms { size, .. } => buckets.len().min(*size) as u64,
                _ => buckets.len() as u64,
            };
            let first_last = widened(buckets.first_last(), kind.extended_keys());
            let span = |step: f64| match first_last {
                Some((a, b)) => ((b as f64 - a as f64) / step).max(0.0) as u64 + 1,
                _ => 0,
            };
            let filled = match kind {
                AggKind::Histogram { interval, min_doc_count: 0, .. } => match first_last {
                    Some((a, b)) => {
                        ((sortable_to_double(b) - sortable_to_double(a)) / interval).max(0.0) as u64 + 1
                    }
                    _ => 0,
                },
                AggKind::DateHistogram { interval: DateInterval::Fixed(ms), min_doc_count: 0, .. } => {
                    span(*ms as f64)
                }
                // The shortest span of the unit: an upper bound on the buckets between.
                AggKind::DateHistogram {
                    interval: DateInterval::Calendar(unit), min_doc_count: 0, ..
                } => {
                    let shortest = match unit {
                        CalendarUnit::Minute => 60_000,
                        CalendarUnit::Hour => 3_600_000,
                        CalendarUnit::Day => DAY,
                        CalendarUnit::Week => 7 * DAY,
                        CalendarUnit::Month => 28 * DAY,
                        CalendarUnit::Quarter => 89 * DAY,
                        CalendarUnit::Year => 365 * DAY,
                    };
                    span(shortest as f64)
                }
                _ => 0,
            };
            gathered.max(filled) + buckets.buckets().map(below).sum::<u64>()
        }
        _ => 0,
    }
}

/// Gathers the batch's documents `rows` (indexes into the batch, ascending and distinct) into `state`.
fn collect(agg: &Aggregation, plan: &Plan, state: &mut State, batch: &Batch, rows: &[u32]) {
    if rows.is_empty() {
        return;
    }
    if let (State::Ranges(buckets), AggKind::Filters { .. }) = (&mut *state, &agg.kind) {
        let mut matched = vec![false; rows.len()];
        for (bucket, i) in buckets.iter_mut().zip(plan.filters.clone()) {
            let inside: Vec<u32> = (rows.iter().zip(&mut matched))
                .filter(|(&r, _)| batch.in_filter(i, r))
                .map(|(&r, m)| {
                    *m = true;
                    r
                })
                .collect();
            fill(agg, plan, bucket, batch, &inside);
        }
        // The `other` bucket, when there is one, is the last, past the filters.
        if let Some(other) = buckets.get_mut(plan.filters.len()) {
            let rest: Vec<u32> = rows.iter().zip(&matched).filter(|(_, &m)| !m).map(|(&r, _)| r).collect();
            fill(agg, plan, other, batch, &rest);
        }
        return;
    }
    if let (State::Top { total, max_score, top }, AggKind::TopHits { request, .. }) = (&mut *state, &agg.kind)
    {
        let keys = &batch.tops[plan.top];
        let columns = &mut batch.top_columns.borrow_mut()[plan.top];
        let mut values = Vec::with_capacity(keys.len());
        for &r in rows {
            // Scores computed for another aggregation are not this one's to show.
            let score = if top_hits_scored(request) { batch.scores[r as usize] } else { f32::NAN };
            *total += 1;
            *max_score = max_score.max(score);
            let hit = batch.hit(r, score);
            columns.values(keys, &hit, &mut values);
            if top.would_take(&values, hit.global) {
                top.offer(SortedHit { hit, values: values.clone() });
            }
        }
        return;
    }
    let field = agg.field().expect("aggregations other than filters read a field");
    let values = &batch.values[plan.slot];
    match (state, &agg.kind) {
        (State::Named { by_id, tally, .. }, _) => {
            if agg.subs.is_empty() {
                // The segment's value ids, and one past them for a stand-in.
                let bound = batch.keyword[plan.slot].as_ref().map_or(0, |c| c.term_count()) + 1;
                match rows.len() == values.len() {
                    true => tally.add(values.all(), bound),
                    false => {
                        let mut ids = plan.grouping.borrow_mut();
                        ids.keys.clear();
                        each_value(values, rows, |id| ids.keys.push(id));
                        tally.add(&ids.keys, bound);
                    }
                }
                return;
            }
            if let (Some(singles), true) = (values.singles(), metrics_only(agg)) {
                for &r in rows {
                    add_row(agg, plan, id_bucket(by_id, singles[r as usize], || new_bucket(agg)), batch, r);
                }
                return;
            }
            let mut grouping = plan.grouping.borrow_mut();
            grouping.pairs.clear();
            grouping
                .pairs
                .extend(rows.iter().flat_map(|&r| values.doc(r as usize).iter().map(move |&id| (id, r))));
            grouping.group(|id, rows| fill(agg, plan, id_bucket(by_id, id, || new_bucket(agg)), batch, rows));
        }
        (State::Metric(state), AggKind::Metric(..)) => {
            // Summed in registers: stores to the state would chain each value to the last.
            let mut sums = *state;
            match field.kind {
                FieldKind::Double => each_value(values, rows, |v| sums.add(sortable_to_double(v))),
                _ => add_integers(&mut sums, values, rows),
            }
            *state = sums;
        }
        (State::Distinct { seen, ids }, _) => match field.kind {
            FieldKind::Keyword => each_value(values, rows, |id| {
                ids.insert(id);
            }),
            _ => each_value(values, rows, |v| seen.insert(hash_value(v))),
        },
        (State::Ranges(buckets), AggKind::Range { ranges, .. }) => {
            for (bucket, range) in buckets.iter_mut().zip(ranges) {
                // Compared as doubles (-0.0 equals 0.0), as Elasticsearch's range aggregator compares.
                let inside = |x: f64| range.from.is_none_or(|f| x >= f) && range.to.is_none_or(|t| x < t);
                let rows: Vec<u32> = (rows.iter().copied())
                    .filter(|&r| values.doc(r as usize).iter().any(|&v| inside(field.number(v))))
                    .collect();
                fill(agg, plan, bucket, batch, &rows);
            }
        }
        (State::Keyed(buckets), kind) => {
            if let (Some(step), true) = (Step::of(kind), metrics_only(agg)) {
                let subs: Vec<_> = (agg.subs.iter().zip(&plan.subs))
                    .map(|(sub, p)| (&batch.values[p.slot], sub.field().expect("metrics read a field")))
                    .collect();
                if buckets.dense.add(step, values, rows, &subs) {
                    return;
                }
            }
            let mut grouping = plan.grouping.borrow_mut();
            let Grouping { pairs, keys, .. } = &mut *grouping;
            pairs.clear();
            let mut keyer = Keyer::of(kind, field, &plan.spans);
            match values.singles() {
                Some(singles) => keyer.pairs(singles, rows, pairs),
                None => {
                    for &r in rows {
                        keys.clear();
                        keys.extend(values.doc(r as usize).iter().map(|&v| keyer.key(v)));
                        keys.sort_unstable();
                        keys.dedup();
                        pairs.extend(keys.iter().map(|&k| (k, r)));
                    }
                }
            }
            drop(keyer);
            if let Some(hard) = kind.hard_bounds() {
                pairs.retain(|&(key, _)| hard.holds(key));
            }
            if metrics_only(agg) {
                // One bucket lookup a document (none in a run of one key), its
                // metrics added at once: grouping the batch first looks each
                // bucket up once, but costs more than that saves.
                let mut last: Option<(i64, usize)> = None;
                for &(key, r) in pairs.iter() {
                    let at = match last {
                        Some((k, at)) if k == key => at,
                        _ => buckets.place(key, || new_bucket(agg)),
                    };
                    last = Some((key, at));
                    add_row(agg, plan, buckets.at(at), batch, r);
                }
                return;
            }
            grouping.group(|key, rows| fill(agg, plan, buckets.entry(key, || new_bucket(agg)), batch, rows));
        }
        _ => unreachable!("states are made for their aggregations"),
    }
}

/// Adds integer values to `sums`, summed as integers (exactly, and with
/// no add waiting on a rounding before it): what adding each as a double
/// gives while the sums stay below 2^53, and nearer the true sum past it.
#[inline(always)]
fn add_integers(sums: &mut Sums, values: &ValueBatch, rows: &[u32]) {
    if rows.len() == values.len() {
        // The whole batch: its values are one slice, bounded first, then
        // summed in vectors where no partial sum can overflow.
        let all = values.all();
        if let Some((lo, hi)) = extremes(all) {
            let total = exact_sum(all, lo, hi);
            sums.merge(Sums { count: all.len() as u64, sum: total as f64, min: lo as f64, max: hi as f64 });
        }
        return;
    }
    let (mut total, mut count, mut lo, mut hi) = (0i128, 0u64, i64::MAX, i64::MIN);
    each_value(values, rows, |v| {
        total += i128::from(v);
        count += 1;
        lo = lo.min(v);
        hi = hi.max(v);
    });
    if count > 0 {
        sums.merge(Sums { count, sum: total as f64, min: lo as f64, max: hi as f64 });
    }
}

/// The sum of `values`, every one within `lo..=hi`: in 64 bits when no
/// partial sum can pass them (a vector add), else in 128.
fn exact_sum(values: &[i64], lo: i64, hi: i64) -> i128 {
    let largest = u128::from(lo.unsigned_abs().max(hi.unsigned_abs()));
    match largest * values.len() as u128 <= i64::MAX as u128 {
        true => i128::from(values.iter().sum::<i64>()),
        false => values.iter().map(|&v| i128::from(v)).sum(),
    }
}

/// Calls `f` with every value of the batch's documents `rows` (ascending
/// indexes into the batch): when they are the whole batch, its values as read.
#[inline]
fn each_value(values: &ValueBatch, rows: &[u32], mut f: impl FnMut(i64)) {
    if rows.len() == values.len() {
        values.all().iter().for_each(|&v| f(v));
    } else if let Some(singles) = values.singles() {
        rows.iter().for_each(|&r| f(singles[r as usize]));
    } else {
        rows.iter().for_each(|&r| values.doc(r as usize).iter().for_each(|&v| f(v)));
    }
}

/// Whether every sub-aggregation of `agg` is a metric (then a document is
/// added to its bucket and the bucket's metrics at once, [`add_row`]).
fn metrics_only(agg: &Aggregation) -> bool {
    agg.subs.iter().all(|s| matches!(s.kind, AggKind::Metric(..)))
}

/// Counts the batch's document `row` in `bucket` and adds its values to the
/// bucket's metrics (every sub-aggregation a metric: [`metrics_only`]).
#[inline(always)]
fn add_row(agg: &Aggregation, plan: &Plan, bucket: &mut Bucket, batch: &Batch, row: u32) {
    bucket.count += 1;
    for ((sub, sub_plan), state) in agg.subs.iter().zip(&plan.subs).zip(bucket.subs.iter_mut()) {
        let (State::Metric(sums), AggKind::Metric(_, field)) = (state, &sub.kind) else {
            unreachable!("metrics_only");
        };
        for &v in batch.values[sub_plan.slot].doc(row as usize) {
            sums.add(field.number(v));
        }
    }
}

/// The bucket of keyword value id `id`, made when new.
fn id_bucket(by_id: &mut Vec<Option<Bucket>>, id: i64, new: impl FnOnce() -> Bucket) -> &mut Bucket {
    let i = id as usize;
    if by_id.len() <= i {
        by_id.resize_with(i + 1, || None);
    }
    by_id[i].get_or_insert_with(new)
}

/// A batch's documents grouped by bucket key: `pairs` (key, row) in, each
/// key's rows out; the buffers are kept for the next batch.
#[derive(Default)]
struct Grouping {
    pairs: Vec<(i64, u32)>,
    /// A document's keys (several values), deduplicated.
    keys: Vec<i64>,
    group_of: FxHashMap<u64, u32>,
    group_keys: Vec<i64>,
    starts: Vec<u32>,
    groups: Vec<u32>,
    order: Vec<u32>,
}

impl Grouping {
    /// Calls `each(key, rows)` once for each distinct key of the pairs, with
    /// the rows that have that key: a bucket is looked up once per batch,
    /// not once per document.
    fn group(&mut self, mut each: impl FnMut(i64, &[u32])) {
        let Grouping { pairs, group_of, group_keys, starts, groups, order, .. } = self;
        group_of.clear();
        group_keys.clear();
        // Group sizes first, in `starts[g + 1]`.
        starts.clear();
        starts.push(0);
        groups.clear();
        for &(key, _) in pairs.iter() {
            // Keys are spread first: FxHash keeps a key's trailing zero bits, and
            // bucket keys (round dates, doubles) have many, so they would collide.
            let g = *group_of.entry(spread(key)).or_insert_with(|| {
                group_keys.push(key);
                starts.push(0);
                group_keys.len() as u32 - 1
            });
            starts[g as usize + 1] += 1;
            groups.push(g);
        }
        // A counting sort of the rows by group.
        for g in 1..starts.len() {
            starts[g] += starts[g - 1];
        }
        order.resize(pairs.len(), 0);
        let mut next = starts.clone();
        for (&(_, row), &g) in pairs.iter().zip(groups.iter()) {
            order[next[g as usize] as usize] = row;
            next[g as usize] += 1;
        }
        for (g, &key) in group_keys.iter().enumerate() {
            each(key, &order[starts[g] as usize..starts[g + 1] as usize]);
        }
    }
}

/// A calendar histogram's buckets met so far, in order: a value's bucket is
/// found by a binary search among them, not by the calendar (as
/// Elasticsearch prepares its roundings).
#[derive(Default)]
struct Spans {
    starts: Vec<i64>,
    /// Where each bucket ends: the next one's start.
    nexts: Vec<i64>,
}

impl Spans {
    /// The key (start) of the bucket of `v`, added when new.
    #[inline]
    fn find(&mut self, v: i64, interval: DateInterval, zone: Zone) -> i64 {
        let at = self.starts.partition_point(|&start| start <= v);
        match at.checked_sub(1) {
            Some(i) if v < self.nexts[i] => self.starts[i],
            _ => {
                let start = bucket_start(interval, zone, v);
                self.starts.insert(at, start);
                self.nexts.insert(at, next_key(interval, zone, start));
                start
            }
        }
    }
}

/// How a keyed aggregation finds a value's bucket key, decided once per batch.
enum Keyer<'a> {
    Histogram {
        interval: f64,
        offset: f64,
        double: bool,
    },
    /// A fixed interval in UTC, buckets starting `offset` after its start: arithmetic.
    FixedUtc {
        ms: i64,
        offset: i64,
    },
    /// A calendar interval or a time zone: the buckets met so far, searched.
    Spans {
        interval: DateInterval,
        zone: Zone,
        offset: i64,
        spans: std::cell::RefMut<'a, Spans>,
    },
    /// Terms: the value itself.
    Value,
}

impl<'a> Keyer<'a> {
    fn of(kind: &AggKind, field: AggField, spans: &'a RefCell<Spans>) -> Self {
        match *kind {
            AggKind::Histogram { interval, offset, .. } => {
                Keyer::Histogram { interval, offset, double: field.kind == FieldKind::Double }
            }
            AggKind::DateHistogram { interval: DateInterval::Fixed(ms), zone: Zone::UTC, offset, .. } => {
                Keyer::FixedUtc { ms, offset }
            }
            AggKind::DateHistogram { interval, zone, offset, .. } => {
                Keyer::Spans { interval, zone, offset, spans: spans.borrow_mut() }
            }
            _ => Keyer::Value,
        }
    }

    /// (key, row) of each of `rows`, whose one value is in `singles`: a loop per kind of key.
    fn pairs(&mut self, singles: &[i64], rows: &[u32], pairs: &mut Vec<(i64, u32)>) {
        let each = rows.iter().map(|&r| (singles[r as usize], r));
        match self {
            Keyer::Histogram { interval, offset, double: true } => {
                pairs.extend(each.map(|(v, r)| (histogram_key(sortable_to_double(v), *interval, *offset), r)))
            }
            Keyer::Histogram { interval, offset, double: false } => {
                pairs.extend(each.map(|(v, r)| (histogram_key(v as f64, *interval, *offset), r)))
            }
            Keyer::FixedUtc { ms, offset } => {
                pairs.extend(each.map(|(v, r)| (fixed_key(v, *ms, *offset), r)))
            }
            Keyer::Value => pairs.extend(each),
            Keyer::Spans { .. } => {
                for (v, r) in each {
                    pairs.push((self.key(v), r));
                }
            }
        }
    }

    /// The bucket a column value falls in.
    #[inline]
    fn key(&mut self, v: i64) -> i64 {
        match self {
            Keyer::Histogram { interval, offset, double } => {
                histogram_key(if *double { sortable_to_double(v) } else { v as f64 }, *interval, *offset)
            }
            Keyer::FixedUtc { ms, offset } => fixed_key(v, *ms, *offset),
            Keyer::Spans { interval, zone, offset, spans } => {
                spans.find(v.saturating_sub(*offset), *interval, *zone).saturating_add(*offset)
            }
            Keyer::Value => v,
        }
    }
}

/// A bijection of the 64-bit keys whose every bit depends on every bit of
/// the key (SplitMix64's finalizer).
fn spread(key: i64) -> u64 {
    let mut x = key as u64;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Counts the batch's documents `rows` in `bucket` and gives them to the bucket's sub-aggregations.
fn fill(agg: &Aggregation, plan: &Plan, bucket: &mut Bucket, batch: &Batch, rows: &[u32]) {
    bucket.count += rows.len() as u64;
    for ((sub, sub_plan), state) in agg.subs.iter().zip(&plan.subs).zip(bucket.subs.iter_mut()) {
        collect(sub, sub_plan, state, batch, rows);
    }
}

/// The key of the histogram bucket holding `x` (the bucket's start, as a sortable double).
#[inline(always)]
fn histogram_key(x: f64, interval: f64, offset: f64) -> i64 {
    double_to_sortable(floor((x - offset) / interval) * interval + offset)
}

/// The key of the fixed-interval bucket (in UTC) holding `v`, buckets starting `offset` after the interval's.
#[inline(always)]
fn fixed_key(v: i64, ms: i64, offset: i64) -> i64 {
    v.saturating_sub(offset).div_euclid(ms).saturating_mul(ms).saturating_add(offset)
}

/// `x.floor()`, without a call into libm for the quotients histograms meet.
#[inline(always)]
fn floor(x: f64) -> f64 {
    if x.abs() < 4.5e15 && x != 0.0 {
        let t = x as i64 as f64;
        if t > x {
            t - 1.0
        } else {
            t
        }
    } else {
        x.floor()
    }
}

const DAY: i64 = 86_400_000;

/// The start of the bucket of `interval` in `zone` holding the instant `t`.
fn bucket_start(interval: DateInterval, zone: Zone, t: i64) -> i64 {
    zone.utc(interval_floor(interval, zone.local(t)))
}

/// The start of the interval holding the wall-clock time `local`.
fn interval_floor(interval: DateInterval, local: i64) -> i64 {
    match interval {
        DateInterval::Fixed(ms) => local.div_euclid(ms) * ms,
        DateInterval::Calendar(unit) => calendar_floor(unit, local),
    }
}

/// The key of the bucket after the one keyed `key` (a UTC instant), in `zone`'s wall-clock time.
fn next_key(interval: DateInterval, zone: Zone, key: i64) -> i64 {
    let local = zone.local(key);
    let next = match interval {
        DateInterval::Fixed(ms) => local.saturating_add(ms),
        DateInterval::Calendar(unit) => calendar_next(unit, local),
    };
    zone.utc(next)
}

/// The start (UTC) of the calendar unit holding `ms`.
fn calendar_floor(unit: CalendarUnit, ms: i64) -> i64 {
    let fixed = |span: i64| ms.div_euclid(span) * span;
    let (y, m, _) = civil_from_days(ms.div_euclid(DAY));
    match unit {
        CalendarUnit::Minute => fixed(60_000),
        CalendarUnit::Hour => fixed(3_600_000),
        CalendarUnit::Day => fixed(DAY),
        // 1970-01-01 was a Thursday; weeks start on Monday.
        CalendarUnit::Week => (ms + 3 * DAY).div_euclid(7 * DAY) * 7 * DAY - 3 * DAY,
        CalendarUnit::Month => days_from_civil(y, m, 1) * DAY,
        CalendarUnit::Quarter => days_from_civil(y, (m - 1) / 3 * 3 + 1, 1) * DAY,
        CalendarUnit::Year => days_from_civil(y, 1, 1) * DAY,
    }
}

/// The start of the calendar unit after the one starting at `ms`.
fn calendar_next(unit: CalendarUnit, ms: i64) -> i64 {
    let months = |n: i64| {
        let (y, m, _) = civil_from_days(ms.div_euclid(DAY));
        let month = y * 12 + (m - 1) + n;
        days_from_civil(month.div_euclid(12), month.rem_euclid(12) + 1, 1) * DAY
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

/// (year, month, day) of a count of days since 1970-01-01, in the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`: integer arithmetic
/// only, so a histogram's bucket costs a few multiplications).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// `agg`'s answer from what it gathered (`fetch` answers `top_hits`).
fn finish(agg: &Aggregation, state: State, fetch: &mut FetchTopHits<'_>) -> Result<Value> {
    if let (State::Ranges(buckets), AggKind::Filters { filters, shape, other }) = (&state, &agg.kind) {
        let mut shown = buckets
            .iter()
            .cloned()
            .map(|b| bucket_json(agg, Map::new(), b, fetch))
            .collect::<Result<Vec<_>>>()?;
        return Ok(match shape {
            FiltersShape::One => shown.pop().unwrap_or(Value::Null),
            FiltersShape::Listed => buckets_json(Value::Array(shown)),
            FiltersShape::Keyed => {
                let names = filters.iter().map(|(n, _)| n).chain(other).cloned();
                let named: Map<String, Value> = names.zip(shown).collect();
                buckets_json(Value::Object(named))
            }
        });
    }
    let field = agg.field().unwrap_or(AggField { id: FieldId::MAX, kind: FieldKind::Long });
    Ok(match (state, &agg.kind) {
        (State::Top { total, max_score, top }, AggKind::TopHits { request, tag }) => {
            let max_score = (!max_score.is_nan()).then_some(max_score);
            return fetch(request, *tag, FoundHits { total, max_score, hits: top.into_hits() });
        }
        (State::Metric(Sums { count, sum, min, max }), AggKind::Metric(metric, _)) => {
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
                    out["value_as_string"] = Value::String(agg.date_text(ms as i64, Zone::UTC));
                }
            }
            // A number `format` shows the value (a sum's even of nothing), and each of stats'.
            let mut show = |key: &str, x: f64| {
                if let Some(text) = agg.number_text(x) {
                    out[key] = Value::String(text);
                }
            };
            match metric {
                Metric::Min if count > 0 => show("value_as_string", min),
                Metric::Max if count > 0 => show("value_as_string", max),
                Metric::Avg if count > 0 => show("value_as_string", sum / count as f64),
                Metric::Sum => show("value_as_string", sum),
                Metric::Stats if count > 0 => {
                    show("min_as_string", min);
                    show("max_as_string", max);
                    show("avg_as_string", sum / count as f64);
                    show("sum_as_string", sum);
                }
                _ => {}
            }
            out
        }
        (State::Distinct { seen, .. }, _) => json!({"value": seen.count()}),
        (State::Ranges(buckets), AggKind::Range { ranges, .. }) => {
            let dates = field.kind == FieldKind::Date;
            let formatted = matches!(agg.format, Some(ValueFormat::Decimal(_)));
            let text = |x: f64| match (dates, agg.number_text(x)) {
                (true, _) => agg.date_text(x as i64, Zone::UTC),
                (false, Some(shown)) => shown,
                (false, None) => format!("{x:?}"),
            };
            let shown = buckets.into_iter().zip(ranges).map(|(bucket, range)| {
                let bound = |b: Option<f64>| b.map_or("*".to_string(), text);
                let key =
                    range.key.clone().unwrap_or_else(|| format!("{}-{}", bound(range.from), bound(range.to)));
                let mut b = Map::new();
                b.insert("key".into(), Value::String(key));
                for (name, value) in [("from", range.from), ("to", range.to)] {
                    if let Some(x) = value {
                        b.insert(name.into(), json!(x));
                        if dates || formatted {
                            b.insert(format!("{name}_as_string"), Value::String(text(x)));
                        }
                    }
                }
                bucket_json(agg, b, bucket, fetch)
            });
            buckets_json(Value::Array(shown.collect::<Result<Vec<_>>>()?))
        }
        (State::Keyed(buckets), kind) => keyed_json(agg, kind, field, buckets.into_sorted(), fetch)?,
        (State::Named { done, .. }, AggKind::Terms { size, min_doc_count, order, filter, .. }) => {
            let key = |k: Arc<[u8]>| {
                Map::from_iter([("key".to_string(), Value::String(String::from_utf8_lossy(&k).into_owned()))])
            };
            let keep = filter.keeper(|test, term: &[u8]| test.keyword(term))?;
            let kept = done.into_iter().filter(|(k, _)| keep(k)).collect();
            terms_json(agg, kept, (*size, *min_doc_count, *order), key, fetch)?
        }
        _ => unreachable!("states are made for their aggregations"),
    })
}

fn keyed_json(
    agg: &Aggregation,
    kind: &AggKind,
    field: AggField,
    mut buckets: BTreeMap<i64, Bucket>,
    fetch: &mut FetchTopHits<'_>,
) -> Result<Value> {
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
        match (field.kind, kind) {
            (FieldKind::Date, AggKind::DateHistogram { zone, .. }) => {
                b.insert("key_as_string".into(), Value::String(agg.date_text(key, *zone)));
            }
            (FieldKind::Date, _) => {
                b.insert("key_as_string".into(), Value::String(agg.date_text(key, Zone::UTC)));
            }
            (FieldKind::Boolean, _) => {
                b.insert("key_as_string".into(), json!(if key == 1 { "true" } else { "false" }));
            }
            (_, AggKind::Histogram { .. }) => {
                if let Some(text) = agg.number_text(sortable_to_double(key)) {
                    b.insert("key_as_string".into(), Value::String(text));
                }
            }
            _ => {
                if let Some(text) = agg.key_text(field, key) {
                    b.insert("key_as_string".into(), Value::String(text));
                }
            }
        }
        b
    };
    let min_doc_count = match kind {
        AggKind::Terms { size, min_doc_count, order, filter, .. } => {
            let keep = filter.keeper(|test, &key: &i64| test.number(key, field))?;
            let kept = buckets.into_iter().filter(|(k, _)| keep(k)).collect();
            return terms_json(agg, kept, (*size, *min_doc_count, *order), key_json, fetch);
        }
        AggKind::Histogram { interval, min_doc_count, .. } => {
            if *min_doc_count == 0 {
                extend(&mut buckets, agg, kind.extended_keys());
                fill_gaps(&mut buckets, agg, |k| double_to_sortable(sortable_to_double(k) + interval));
            }
            *min_doc_count
        }
        AggKind::DateHistogram { interval, offset, min_doc_count, zone, .. } => {
            if *min_doc_count == 0 {
                extend(&mut buckets, agg, kind.extended_keys());
                let next =
                    |k: i64| next_key(*interval, *zone, k.saturating_sub(*offset)).saturating_add(*offset);
                fill_gaps(&mut buckets, agg, next);
            }
            *min_doc_count
        }
        _ => unreachable!("only terms and histograms are keyed"),
    };
    let shown = buckets.into_iter().filter(|(_, b)| b.count >= min_doc_count);
    let shown = shown.map(|(k, b)| bucket_json(agg, key_json(k), b, fetch)).collect::<Result<Vec<_>>>()?;
    Ok(buckets_json(Value::Array(shown)))
}

/// A `terms` answer: buckets ordered as asked (keys by their own order:
/// column values, or keywords' bytes), the first `size` shown.
fn terms_json<K: Ord>(
    agg: &Aggregation,
    mut all: Vec<(K, Bucket)>,
    (size, min_doc_count, order): (usize, u64, TermsOrder),
    key_json: impl Fn(K) -> Map<String, Value>,
    fetch: &mut FetchTopHits<'_>,
) -> Result<Value> {
    all.retain(|(_, b)| b.count >= min_doc_count);
    all.sort_by(|(ka, a), (kb, b)| match order {
        TermsOrder::CountDesc => b.count.cmp(&a.count).then(ka.cmp(kb)),
        TermsOrder::CountAsc => a.count.cmp(&b.count).then(ka.cmp(kb)),
        TermsOrder::KeyAsc => ka.cmp(kb),
        TermsOrder::KeyDesc => kb.cmp(ka),
    });
    let other: u64 = all.iter().skip(size).map(|(_, b)| b.count).sum();
    let shown: Vec<Value> = all
        .into_iter()
        .take(size)
        .map(|(k, b)| bucket_json(agg, key_json(k), b, fetch))
        .collect::<Result<_>>()?;
    let mut answer = Map::new();
    answer.insert("doc_count_error_upper_bound".into(), 0.into());
    answer.insert("sum_other_doc_count".into(), other.into());
    answer.insert("buckets".into(), Value::Array(shown));
    Ok(Value::Object(answer))
}

/// Adds the empty buckets between the first and the last (Elasticsearch's
/// histograms show them when `min_doc_count` is 0), at most a million.
/// The empty buckets of a histogram's extended bounds, where it has none.
fn extend(buckets: &mut BTreeMap<i64, Bucket>, agg: &Aggregation, keys: Option<(i64, i64)>) {
    for key in keys.into_iter().flat_map(|(first, last)| [first, last]) {
        buckets.entry(key).or_insert_with(|| new_bucket(agg));
    }
}

/// `first_last` reaching out to `bounds` too.
fn widened(first_last: Option<(i64, i64)>, bounds: Option<(i64, i64)>) -> Option<(i64, i64)> {
    match (first_last, bounds) {
        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
        (x, y) => x.or(y),
    }
}

/// The bucket keys a histogram's `hard_bounds` let in (see [`AggKind::Histogram`]).
enum HardBounds {
    Numbers { min: f64, max: f64, offset: f64 },
    Dates { min: i64, max: i64 },
}

impl HardBounds {
    #[inline]
    fn holds(&self, key: i64) -> bool {
        match *self {
            HardBounds::Numbers { min, max, offset } => {
                let start = sortable_to_double(key) - offset;
                min <= start && start <= max
            }
            HardBounds::Dates { min, max } => min <= key && key < max,
        }
    }
}

impl AggKind {
    /// A histogram's hard bounds, the dates moved to their intervals' starts.
    fn hard_bounds(&self) -> Option<HardBounds> {
        match *self {
            AggKind::Histogram { offset, hard_bounds: Some((min, max)), .. } => {
                Some(HardBounds::Numbers { min, max, offset })
            }
            AggKind::DateHistogram { hard_bounds: Some((min, max)), .. } => {
                let key = |ms: i64| match ms {
                    i64::MIN | i64::MAX => ms,
                    _ => self.bound_key(ms),
                };
                Some(HardBounds::Dates { min: key(min), max: key(max) })
            }
            _ => None,
        }
    }

    /// The keys of the buckets of a histogram's extended bounds (shown only
    /// with `min_doc_count` 0), when it has them.
    fn extended_keys(&self) -> Option<(i64, i64)> {
        match *self {
            AggKind::Histogram {
                interval,
                offset,
                min_doc_count: 0,
                extended_bounds: Some((lo, hi)),
                ..
            } => Some((histogram_key(lo, interval, offset), histogram_key(hi, interval, offset))),
            AggKind::DateHistogram { min_doc_count: 0, extended_bounds: Some((lo, hi)), .. } => {
                Some((self.bound_key(lo), self.bound_key(hi)))
            }
            _ => None,
        }
    }

    /// The bucket key a date histogram's bound stands for: the start of its
    /// interval, then the offset (not the start of the interval `bound -
    /// offset` is in, as for a value: Elasticsearch rounds bounds so).
    fn bound_key(&self, bound: i64) -> i64 {
        match *self {
            AggKind::DateHistogram { interval, zone, offset, .. } => {
                zone.utc(interval_floor(interval, zone.local(bound))).saturating_add(offset)
            }
            _ => bound,
        }
    }
}

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

/// `{"buckets": buckets}`, the buckets moved in: `json!` would copy them
/// value by value, as much work as making them.
fn buckets_json(buckets: Value) -> Value {
    Value::Object(Map::from_iter([("buckets".to_string(), buckets)]))
}

fn bucket_json(
    agg: &Aggregation,
    mut b: Map<String, Value>,
    bucket: Bucket,
    fetch: &mut FetchTopHits<'_>,
) -> Result<Value> {
    b.insert("doc_count".into(), bucket.count.into());
    for (sub, state) in agg.subs.iter().zip(bucket.subs) {
        b.insert(sub.name.clone(), finish(sub, state, fetch)?);
    }
    Ok(Value::Object(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date_format::parse_date;
    use chrono::{DateTime, Datelike};

    #[test]
    fn exact_sums_of_values_whose_sum_passes_64_bits_are_exact() {
        let sum = |values: &[i64]| {
            let (lo, hi) = extremes(values).unwrap();
            exact_sum(values, lo, hi)
        };
        assert_eq!(sum(&[i64::MAX, i64::MAX, 5]), 2 * i128::from(i64::MAX) + 5);
        assert_eq!(sum(&[i64::MIN, i64::MIN]), 2 * i128::from(i64::MIN));
        assert_eq!(sum(&[3, -7, 1 << 40]), (1i128 << 40) - 4);
    }

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
        assert_eq!(Zone::UTC.format(at("2024-03-05")), "2024-03-05T00:00:00.000Z");
        assert_eq!(calendar_next(CalendarUnit::Quarter, at("2024-10-01")), at("2025-01-01"));
        assert_eq!(calendar_floor(CalendarUnit::Month, at("1969-12-31T23:59:59.999Z")), at("1969-12-01"));
        // Every day of 600 years against chrono's calendar.
        for days in -200_000..20_000 {
            let date = DateTime::from_timestamp_millis(days * DAY).unwrap().date_naive();
            let (y, m, d) = civil_from_days(days);
            assert_eq!((y, m, d), (i64::from(date.year()), i64::from(date.month()), i64::from(date.day())));
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
