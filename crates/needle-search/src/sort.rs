//! Sorting hits by field values: the top k by a list of keys (a field's doc
//! values, the score, the index order), as Elasticsearch's `sort`, with
//! `search_after` for deep paging. Matches are visited in index order; past
//! `track_total_hits`, blocks of documents whose best value cannot enter the
//! top are skipped by the first key's block bounds. One numeric key (the
//! common sort) is ranked as plain numbers ([`NumericTop`]), and, where the
//! field's points stand for its column, from the points' best end: the
//! matches gathered into bits and met leaf by leaf, so a top 10 reads a
//! leaf or two instead of a value per match.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use std::sync::Arc;

use needle_codecs::doc_values::{KeywordValues, NumericValues, Points, ValueBatch};
use needle_codecs::SegmentRead;
use needle_core::deadline::{self, CHECK_EVERY};
use needle_core::{read_error, Deletes, DocId, FieldId, Result, TERMINATED};

use crate::collect::ScoredDoc;
use crate::iter::{BoxScorer, DocBits, Matcher};
use crate::stats::{CorpusStats, IndexStats};
use crate::weight::scorer;
use crate::Query;

/// What a hit is ranked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortBy {
    Score,
    /// The position in the index (Elasticsearch's `_doc`).
    Doc,
    /// A numeric field's doc values: its smallest value when ascending, its
    /// largest when descending (Elasticsearch's default `mode`); `missing`
    /// stands in for a document without one.
    Field {
        field: FieldId,
        missing: i64,
    },
    /// A keyword field's doc values: its first value in byte order when
    /// ascending, its last when descending; a document without one sorts
    /// last, or first with `missing_first`.
    Keyword {
        field: FieldId,
        missing_first: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SortKey {
    pub by: SortBy,
    pub descending: bool,
}

/// A hit's value for one key.
#[derive(Debug, Clone)]
pub enum SortValue {
    Int(i64),
    Score(f32),
    Doc(u64),
    Bytes(Arc<[u8]>),
    /// No value (a keyword key's document without one).
    Missing,
}

impl SortValue {
    fn cmp(&self, other: &SortValue) -> Ordering {
        match (self, other) {
            (SortValue::Int(a), SortValue::Int(b)) => a.cmp(b),
            (SortValue::Score(a), SortValue::Score(b)) => a.total_cmp(b),
            (SortValue::Doc(a), SortValue::Doc(b)) => a.cmp(b),
            (SortValue::Bytes(a), SortValue::Bytes(b)) => a.cmp(b),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            SortValue::Int(_) => 0,
            SortValue::Score(_) => 1,
            SortValue::Doc(_) => 2,
            SortValue::Bytes(_) => 3,
            SortValue::Missing => 4,
        }
    }
}

impl PartialEq for SortValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SortValue::Score(a), SortValue::Score(b)) => a.to_bits() == b.to_bits(),
            (a, b) => a.cmp(b) == Ordering::Equal,
        }
    }
}
impl Eq for SortValue {}
impl Hash for SortValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            SortValue::Int(v) => v.hash(state),
            SortValue::Score(s) => s.to_bits().hash(state),
            SortValue::Doc(d) => d.hash(state),
            SortValue::Bytes(b) => b.hash(state),
            SortValue::Missing => {}
        }
    }
}

/// A hit with its sort values, one per key.
#[derive(Debug, Clone)]
pub struct SortedHit {
    pub hit: ScoredDoc,
    pub values: Vec<SortValue>,
}

#[derive(Debug, Clone)]
pub struct SortedDocs {
    /// In sort order; equal values in index order.
    pub hits: Vec<SortedHit>,
    pub total: u64,
    /// `false` when blocks were skipped: `total` is then a lower bound.
    pub total_is_exact: bool,
}

/// Whether a hit's `values` rank after `after` (see [`SortRequest::after`]).
fn ranks_after(keys: &[SortKey], values: &[SortValue], after: &[SortValue]) -> bool {
    match compare(keys, values, after) {
        Ordering::Greater => true,
        Ordering::Equal => after.len() < keys.len(),
        Ordering::Less => false,
    }
}

/// How two hits' values compare under `keys` (`Less`: `a` ranks first).
pub fn compare(keys: &[SortKey], a: &[SortValue], b: &[SortValue]) -> Ordering {
    for ((key, x), y) in keys.iter().zip(a).zip(b) {
        // A missing keyword is last (or first) whatever the direction.
        let first = matches!(key.by, SortBy::Keyword { missing_first: true, .. });
        let o = match (x, y) {
            (SortValue::Missing, SortValue::Missing) => Ordering::Equal,
            (SortValue::Missing, _) => return if first { Ordering::Less } else { Ordering::Greater },
            (_, SortValue::Missing) => return if first { Ordering::Greater } else { Ordering::Less },
            _ if key.descending => x.cmp(y).reverse(),
            _ => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// What a sorted search is asked for.
pub struct SortRequest<'q> {
    pub keys: &'q [SortKey],
    pub top_k: usize,
    /// Only hits ranked strictly after these values (Elasticsearch's
    /// `search_after`). Fewer values than keys bound the leading keys only:
    /// a hit equal on them comes after them.
    pub after: Option<&'q [SortValue]>,
    /// Compute scores even when no key is the score (`track_scores`).
    pub scores: bool,
    /// Matches are counted exactly up to this many; past it, blocks of
    /// documents that cannot enter the top may be skipped unread (by the
    /// first key's block bounds) and the total is a lower bound.
    pub track_total_hits: u64,
}

/// The best `k` hits so far by a list of keys, in rank order (equal values
/// in index order): a sorted search's top, and each bucket's of a `top_hits`
/// aggregation.
#[derive(Debug, Clone)]
pub struct SortedTop {
    keys: Vec<SortKey>,
    k: usize,
    hits: Vec<SortedHit>,
}

impl SortedTop {
    pub fn new(keys: Vec<SortKey>, k: usize) -> Self {
        SortedTop { keys, k, hits: Vec::new() }
    }

    /// The hits kept, best first.
    pub fn into_hits(self) -> Vec<SortedHit> {
        self.hits
    }

    fn rank(&self, a: &SortedHit, b: &SortedHit) -> Ordering {
        compare(&self.keys, &a.values, &b.values).then(a.hit.global.cmp(&b.hit.global))
    }

    /// The worst hit kept, once the top is full.
    fn full_worst(&self) -> Option<&SortedHit> {
        self.hits.last().filter(|_| self.hits.len() == self.k)
    }

    /// Whether a hit with these values and position would be kept.
    pub fn would_take(&self, values: &[SortValue], global: u64) -> bool {
        self.k > 0
            && self.full_worst().is_none_or(|worst| {
                compare(&self.keys, values, &worst.values).then(global.cmp(&worst.hit.global))
                    == Ordering::Less
            })
    }

    pub fn offer(&mut self, hit: SortedHit) {
        if self.hits.len() == self.k
            && self.hits.last().is_none_or(|worst| self.rank(&hit, worst) != Ordering::Less)
        {
            return;
        }
        let at = self.hits.partition_point(|h| self.rank(h, &hit) == Ordering::Less);
        self.hits.insert(at, hit);
        self.hits.truncate(self.k);
    }
}

/// The best `top_k` by one numeric key, in rank order: the common sort (a
/// date, newest first) kept as plain numbers, compared without building each
/// match's list of values.
struct NumericTop {
    descending: bool,
    k: usize,
    hits: Vec<(i64, ScoredDoc)>,
}

impl NumericTop {
    /// Whether `value` at `global` ranks ahead of `than` (equal values in index order).
    fn ahead(&self, (value, global): (i64, u64), than: &(i64, ScoredDoc)) -> bool {
        let o = if self.descending { than.0.cmp(&value) } else { value.cmp(&than.0) };
        o.then(global.cmp(&than.1.global)) == Ordering::Less
    }

    fn worst(&self) -> Option<i64> {
        self.hits.last().filter(|_| self.hits.len() == self.k).map(|h| h.0)
    }

    /// No more hits are kept (it holds `k`).
    fn is_full(&self) -> bool {
        self.hits.len() == self.k
    }

    fn offer(&mut self, value: i64, hit: ScoredDoc) {
        let key = (value, hit.global);
        if self.k == 0 || (self.hits.len() == self.k && self.hits.last().is_some_and(|w| !self.ahead(key, w)))
        {
            return;
        }
        let at = self.hits.partition_point(|h| !self.ahead(key, h));
        self.hits.insert(at, (value, hit));
        self.hits.truncate(self.k);
    }

    fn into_hits(self) -> Vec<SortedHit> {
        self.hits.into_iter().map(|(v, hit)| SortedHit { hit, values: vec![SortValue::Int(v)] }).collect()
    }
}

/// Where the matches go: the general top, or the one-numeric-key one.
enum Top {
    General(SortedTop),
    Numeric(NumericTop),
}

impl Top {
    /// The worst kept hit's first value, once the top is full and it is a number.
    fn worst_first(&self) -> Option<i64> {
        match self {
            Top::General(top) => match top.full_worst().and_then(|w| w.values.first()) {
                Some(SortValue::Int(v)) => Some(*v),
                _ => None,
            },
            Top::Numeric(top) => top.worst(),
        }
    }
}

pub(crate) fn search_sorted(
    segments: &[&dyn SegmentRead],
    deletes: &[Option<&dyn Deletes>],
    corpus: Option<&CorpusStats>,
    query: &Query,
    request: &SortRequest<'_>,
    bloom: bool,
) -> Result<SortedDocs> {
    let mut stats = IndexStats::collect(segments, query, bloom, corpus)?;
    let scores = request.scores || request.keys.iter().any(|k| k.by == SortBy::Score);
    let mut top = match (request.keys, request.after) {
        ([SortKey { by: SortBy::Field { .. }, descending }], None) => {
            Top::Numeric(NumericTop { descending: *descending, k: request.top_k, hits: Vec::new() })
        }
        _ => Top::General(SortedTop::new(request.keys.to_vec(), request.top_k)),
    };
    let (mut total, mut base, mut skipped) = (0u64, 0u64, false);
    let mut values = Vec::with_capacity(request.keys.len());
    for (seg, &segment) in segments.iter().enumerate() {
        let mut columns = SortColumns::open(request.keys, segment);
        if let Some(mut s) = scorer(query, &mut stats, seg, segment, 1.0)? {
            if let (Top::Numeric(top), false) = (&mut top, scores) {
                let key = &request.keys[0];
                let sorted = in_index_order(segment, key);
                let walk = NumericWalk { key, seg, base, track: request.track_total_hits, sorted };
                let column = &mut columns.0[0];
                let mut ranked = match key_span(query, key) {
                    Some(span) => {
                        walk.top_from_points(segment, span, top, deletes[seg], &mut total, &mut skipped)?
                    }
                    None => false,
                };
                // An index sorted by the key stops its walk early instead.
                if !ranked && !sorted {
                    ranked = walk.top_from_matches(segment, &mut s, column, top, deletes[seg], &mut total)?;
                }
                if !ranked {
                    walk.run(&mut s, top, column, deletes[seg], &mut total, &mut skipped);
                }
                read_error::check()?;
                base += u64::from(segment.meta().max_doc);
                continue;
            }
            let mut doc = s.doc();
            let mut competitive_until = None;
            while doc != TERMINATED {
                if total % CHECK_EVERY == 0 && deadline::passed() {
                    break;
                }
                if total >= request.track_total_hits && competitive_until.is_none_or(|end| doc > end) {
                    let (end, hopeless) = match (request.keys.first(), columns.0.first()) {
                        (Some(key), Some(column)) => {
                            block_hopeless(top.worst_first(), key, request.keys.len(), column, doc)
                        }
                        _ => (TERMINATED, false),
                    };
                    if hopeless {
                        skipped = true;
                        doc = if end == TERMINATED { TERMINATED } else { s.seek(end + 1) };
                        continue;
                    }
                    competitive_until = Some(end);
                }
                if !deletes[seg].is_some_and(|d| d.is_deleted(doc)) {
                    total += 1;
                    let score = if scores { s.score() } else { f32::NAN };
                    let hit = ScoredDoc { segment: seg, doc, global: base + u64::from(doc), score };
                    match &mut top {
                        Top::Numeric(top) => {
                            top.offer(numeric_key(&request.keys[0], &mut columns.0[0], doc), hit)
                        }
                        Top::General(top) => {
                            columns.values(request.keys, &hit, &mut values);
                            let after = request.after.is_none_or(|a| ranks_after(request.keys, &values, a));
                            if after && top.would_take(&values, hit.global) {
                                top.offer(SortedHit { hit, values: values.clone() });
                            }
                        }
                    }
                }
                doc = s.advance();
            }
        }
        read_error::check()?;
        base += u64::from(segment.meta().max_doc);
    }
    let hits = match top {
        Top::General(top) => top.hits,
        Top::Numeric(top) => top.into_hits(),
    };
    Ok(SortedDocs { hits, total, total_is_exact: !skipped })
}

/// Matches in a batch, for a sort by one numeric key without scores.
const SORT_BATCH: usize = 1024;

/// One segment's matches ranked by one numeric key without scores, a batch
/// at a time: the batch's values read at once, each compared with the worst
/// kept as a plain number, only those ahead of it offered.
struct NumericWalk<'k> {
    key: &'k SortKey,
    seg: usize,
    base: u64,
    track: u64,
    /// The segment's documents are in this key's order (an index sort): once
    /// the top is full, no later match can enter it.
    sorted: bool,
}

/// Whether `segment` holds its documents in `key`'s order (its index sort is that key).
fn in_index_order(segment: &dyn SegmentRead, key: &SortKey) -> bool {
    let (Some(order), SortBy::Field { field, missing }) = (segment.meta().sorted, key.by) else {
        return false;
    };
    order.field == field && order.descending == key.descending && order.missing == missing
}

impl NumericWalk<'_> {
    fn run(
        &self,
        s: &mut BoxScorer<'_>,
        top: &mut NumericTop,
        column: &mut Column,
        deletes: Option<&dyn Deletes>,
        total: &mut u64,
        skipped: &mut bool,
    ) {
        let SortBy::Field { missing, .. } = self.key.by else { unreachable!("a numeric key") };
        let (mut docs, mut batch) = (Vec::with_capacity(SORT_BATCH), ValueBatch::default());
        let mut doc = s.doc();
        while doc != TERMINATED && !deadline::passed() {
            if self.sorted && top.is_full() && !self.ahead(top.worst(), column, doc, missing) {
                // Matches come in the key's order: none from here on can enter the top;
                // the rest only count, up to what is tracked.
                if *total >= self.track {
                    *skipped = true;
                    return;
                }
                docs.clear();
                s.fill_docs(&mut docs, SORT_BATCH);
                doc = s.doc();
                *total +=
                    docs.iter().filter(|&&d| deletes.is_none_or(|del| !del.is_deleted(d))).count() as u64;
                continue;
            }
            // A batch ends near the end of the first key's block, where skipping is decided.
            let (end, hopeless) = match *total >= self.track {
                true => block_hopeless(top.worst(), self.key, 1, column, doc),
                false => (block_end(column, doc), false),
            };
            if hopeless {
                *skipped = true;
                doc = if end == TERMINATED { TERMINATED } else { s.seek(end + 1) };
                continue;
            }
            docs.clear();
            s.fill_docs(&mut docs, (end.saturating_sub(doc) as usize).saturating_add(1).min(SORT_BATCH));
            doc = s.doc();
            if let Some(d) = deletes {
                docs.retain(|&x| !d.is_deleted(x));
            }
            *total += docs.len() as u64;
            self.offer_batch(&docs, column, &mut batch, top);
        }
    }

    /// Offers each of `docs` (ascending) by its value in `column`, read for
    /// the batch at once; only those ahead of the worst kept are offered.
    fn offer_batch(&self, docs: &[DocId], column: &mut Column, batch: &mut ValueBatch, top: &mut NumericTop) {
        let SortBy::Field { missing, .. } = self.key.by else { unreachable!("a numeric key") };
        match column {
            Column::Numeric(c) => c.fill(docs, batch),
            _ => {
                batch.clear();
                docs.iter().for_each(|_| batch.push(&[]));
            }
        }
        let mut worst = top.worst();
        for (i, &d) in docs.iter().enumerate() {
            let values = batch.doc(i);
            let picked = if self.key.descending { values.last() } else { values.first() };
            let value = picked.copied().unwrap_or(missing);
            if self.beats(worst, value) {
                top.offer(value, self.hit(d));
                worst = top.worst();
            }
        }
    }

    fn hit(&self, doc: DocId) -> ScoredDoc {
        ScoredDoc { segment: self.seg, doc, global: self.base + u64::from(doc), score: f32::NAN }
    }
}

impl NumericWalk<'_> {
    /// Ranks a segment from the key's points, the values sorted, when the
    /// query matches exactly the documents whose value lies in `span` (see
    /// [`key_span`]): leaves from the best end, each pair in the span
    /// offered, until the top is full and the next leaf holds nothing ahead
    /// of its worst (a tie may be ahead: earlier in index order). A date
    /// newest first reads a leaf or two, not every value. `false`, having
    /// done nothing, when the points cannot stand for the column: none (or
    /// updated in place), a document with two values, or one without; or
    /// when a span short of every value leaves deletions to count.
    fn top_from_points(
        &self,
        segment: &dyn SegmentRead,
        (lower, upper): (i64, i64),
        top: &mut NumericTop,
        deletes: Option<&dyn Deletes>,
        total: &mut u64,
        skipped: &mut bool,
    ) -> Result<bool> {
        let max_doc = segment.meta().max_doc;
        let Some(points) = self.column_points(segment) else { return Ok(false) };
        let every_value = (lower, upper) == (i64::MIN, i64::MAX);
        if deletes.is_some() && !every_value {
            return Ok(false);
        }
        let mut pairs = Vec::new();
        for i in self.best_first(&points) {
            let (min, max) = points.leaf_bounds(i);
            if self.behind(top, min, max) {
                break;
            }
            if max < lower || min > upper {
                continue;
            }
            points.read_pairs(i, &mut pairs)?;
            for &(value, doc) in &pairs {
                if (lower..=upper).contains(&value) && !deletes.is_some_and(|d| d.is_deleted(doc)) {
                    top.offer(value, self.hit(doc));
                }
            }
        }
        // The live documents in the span match: counted up to what is tracked.
        match deletes {
            None => *total += points.count(lower, upper),
            Some(d) => {
                let mut doc = 0;
                while doc < max_doc && *total < self.track {
                    *total += u64::from(!d.is_deleted(doc));
                    doc += 1;
                }
                *skipped |= doc < max_doc;
            }
        }
        Ok(true)
    }

    /// Ranks a segment's matches from the key's points, for a query whose
    /// matches the points cannot stand for: the matches gathered first into
    /// a bit per document (and counted), then leaves from the best end, each
    /// pair whose document matches offered, until the top is full and the
    /// next leaf holds nothing ahead of its worst, or every match was met. A
    /// match sorted by date, newest first, reads its postings and a leaf or
    /// two, not a value per match. When the best end holds few matches (the
    /// leaves read pass [`PAIRS_PER_MATCH`] a match), the gathered matches
    /// are ranked by their values instead, as a walk would. `false`, having
    /// done nothing, when the points cannot stand for the column.
    fn top_from_matches(
        &self,
        segment: &dyn SegmentRead,
        s: &mut BoxScorer<'_>,
        column: &mut Column,
        top: &mut NumericTop,
        deletes: Option<&dyn Deletes>,
        total: &mut u64,
    ) -> Result<bool> {
        let Some(points) = self.column_points(segment) else { return Ok(false) };
        if self.track != u64::MAX && self.walk_meets_best_first(column, segment.meta().max_doc) {
            return Ok(false);
        }
        let mut matches = gather(s, deletes, segment.meta().max_doc);
        let count = matches.len();
        *total += count;
        let kept = top.hits.clone();
        let (mut pairs, mut read, mut met) = (Vec::new(), 0u64, 0u64);
        for i in self.best_first(&points) {
            let (min, max) = points.leaf_bounds(i);
            if met == count || self.behind(top, min, max) {
                return Ok(true);
            }
            if read > count.saturating_mul(PAIRS_PER_MATCH) {
                break;
            }
            points.read_pairs(i, &mut pairs)?;
            read += pairs.len() as u64;
            for &(value, doc) in &pairs {
                if matches.contains(doc) {
                    met += 1;
                    top.offer(value, self.hit(doc));
                }
            }
        }
        if met < count {
            top.hits = kept;
            let (mut docs, mut batch) = (Vec::with_capacity(SORT_BATCH), ValueBatch::default());
            let mut from = 0;
            while from != TERMINATED {
                docs.clear();
                from = matches.fill_matches(from, &mut docs, SORT_BATCH);
                self.offer_batch(&docs, column, &mut batch, top);
            }
        }
        Ok(true)
    }

    /// Whether the key's values run with the documents the sort's way (the
    /// first block's all ahead of the last's): a walk in index order then
    /// meets the best first and, past what is tracked, skips every later
    /// block, cheaper than gathering every match.
    fn walk_meets_best_first(&self, column: &Column, max_doc: DocId) -> bool {
        let Column::Numeric(c) = column else { return false };
        let (Some(first), Some(last)) = (c.block_bounds(0).1, c.block_bounds(max_doc.saturating_sub(1)).1)
        else {
            return false;
        };
        match self.key.descending {
            true => first.0 > last.1,
            false => first.1 < last.0,
        }
    }

    /// The key's points when they can stand for its column: one value in
    /// every document (none updated in place, which the points would not see).
    fn column_points(&self, segment: &dyn SegmentRead) -> Option<Points> {
        let SortBy::Field { field, .. } = self.key.by else { return None };
        let points = segment.numeric_points(field)?;
        (points.single_valued() && points.len() == u64::from(segment.meta().max_doc)).then_some(points)
    }

    /// The leaves from the key's best end.
    fn best_first(&self, points: &Points) -> impl Iterator<Item = usize> {
        let (leaves, descending) = (points.leaf_count(), self.key.descending);
        (0..leaves).map(move |step| if descending { leaves - 1 - step } else { step })
    }

    /// Whether a leaf of values `min..=max` holds nothing ahead of the worst
    /// kept (a full top); a tie may be ahead, earlier in index order.
    fn behind(&self, top: &NumericTop, min: i64, max: i64) -> bool {
        top.worst().is_some_and(|w| if self.key.descending { max < w } else { min > w })
    }

    /// Whether `value` ranks ahead of the worst kept (equal to it is behind:
    /// later in index order), or nothing is kept yet.
    fn beats(&self, worst: Option<i64>, value: i64) -> bool {
        worst.is_none_or(|w| if self.key.descending { value > w } else { value < w })
    }

    /// Whether `doc`'s value ranks ahead of the worst kept.
    fn ahead(&self, worst: Option<i64>, column: &mut Column, doc: DocId, missing: i64) -> bool {
        let values = match column {
            Column::Numeric(c) => c.values(doc),
            _ => &[],
        };
        let picked = if self.key.descending { values.last() } else { values.first() };
        self.beats(worst, picked.copied().unwrap_or(missing))
    }
}

/// Leaves read a match, past which ranking from the points gives way to the
/// matches' values: a pair read in a leaf costs a fraction of a value read at
/// random.
const PAIRS_PER_MATCH: u64 = 4;

/// The live matches of `s`, a bit per document of the segment.
fn gather(s: &mut BoxScorer<'_>, deletes: Option<&dyn Deletes>, max_doc: DocId) -> DocBits {
    let mut matches = DocBits::empty(max_doc);
    let mut docs = Vec::with_capacity(SORT_BATCH);
    while s.doc() != TERMINATED && !deadline::passed() {
        docs.clear();
        s.fill_docs(&mut docs, SORT_BATCH);
        for &doc in &docs {
            if doc < max_doc && !deletes.is_some_and(|d| d.is_deleted(doc)) {
                matches.insert(doc);
            }
        }
    }
    matches
}

/// The values of `key`'s field a document must have to match `query`, when
/// that is all the query asks (every document having one value): anything
/// for a match-all, a range of the field, or all of a conjunction's such
/// clauses; `None` for anything else.
fn key_span(query: &Query, key: &SortKey) -> Option<(i64, i64)> {
    let SortBy::Field { field, .. } = key.by else { return None };
    match query {
        Query::MatchAll => Some((i64::MIN, i64::MAX)),
        Query::Range(r) if r.field == field => Some((r.lower, r.upper)),
        Query::Boost(q, _) | Query::Constant(q) => key_span(q, key),
        Query::Bool(b) if b.should.is_empty() && b.must_not.is_empty() && b.minimum_should_match == 0 => {
            let mut clauses = b.must.iter().chain(&b.filter).peekable();
            clauses.peek()?;
            clauses.try_fold((i64::MIN, i64::MAX), |(lo, hi), q| {
                key_span(q, key).map(|(l, h)| (lo.max(l), hi.min(h)))
            })
        }
        _ => None,
    }
}

/// The last document of the first key's block holding `doc` (`TERMINATED`: no blocks).
fn block_end(column: &Column, doc: DocId) -> DocId {
    match column {
        Column::Numeric(c) => c.block_bounds(doc).0,
        _ => TERMINATED,
    }
}

/// Whether no document of the block holding `doc` can enter the top (it is
/// full, and the first key is a numeric field whose best value in the block,
/// or the missing value's stand-in, ranks below the worst kept), and the
/// block's last document.
fn block_hopeless(
    worst: Option<i64>,
    key: &SortKey,
    keys: usize,
    column: &Column,
    doc: DocId,
) -> (DocId, bool) {
    let Column::Numeric(c) = column else {
        return (TERMINATED, false);
    };
    let SortBy::Field { missing, .. } = key.by else { return (TERMINATED, false) };
    let (end, bounds) = c.block_bounds(doc);
    let Some(worst) = worst else {
        return (end, false);
    };
    // The best a document there can have: its best value, or `missing` (some may have none).
    let best = match (bounds, key.descending) {
        (Some((_, hi)), true) => hi.max(missing),
        (Some((lo, _)), false) => lo.min(missing),
        (None, _) => missing,
    };
    // How the best ranks against the worst kept (Less: ahead of it). A tie
    // loses to it (later in index order) only when the key is the only one.
    let rank = if key.descending { worst.cmp(&best) } else { best.cmp(&worst) };
    (end, rank == Ordering::Greater || (rank == Ordering::Equal && keys == 1))
}

/// A sort key's doc values in the segment being walked.
enum Column {
    Numeric(Box<dyn NumericValues + Send>),
    Keyword(Box<dyn KeywordValues + Send>),
    None,
}

/// The columns of a list of sort keys in one segment, opened once for its hits.
pub struct SortColumns(Vec<Column>);

impl SortColumns {
    pub fn open(keys: &[SortKey], segment: &dyn SegmentRead) -> Self {
        let column = |k: &SortKey| match k.by {
            SortBy::Field { field, .. } => segment.numeric_values(field).map(Column::Numeric),
            SortBy::Keyword { field, .. } => segment.keyword_values(field).map(Column::Keyword),
            _ => None,
        };
        SortColumns(keys.iter().map(|k| column(k).unwrap_or(Column::None)).collect())
    }

    /// `hit`'s value for each of `keys` (those the columns were opened for), into `out`.
    pub fn values(&mut self, keys: &[SortKey], hit: &ScoredDoc, out: &mut Vec<SortValue>) {
        out.clear();
        out.extend(keys.iter().zip(self.0.iter_mut()).map(|(k, c)| key_value(k, c, hit)));
    }
}

/// A numeric key's value for `doc`: its smallest value ascending, its largest
/// descending, `missing` when it has none.
fn numeric_key(key: &SortKey, column: &mut Column, doc: DocId) -> i64 {
    let SortBy::Field { missing, .. } = key.by else { unreachable!("a numeric key") };
    let values = match column {
        Column::Numeric(c) => c.values(doc),
        _ => &[],
    };
    let picked = if key.descending { values.last() } else { values.first() };
    picked.copied().unwrap_or(missing)
}

fn key_value(key: &SortKey, column: &mut Column, hit: &ScoredDoc) -> SortValue {
    match (key.by, column) {
        (SortBy::Score, _) => SortValue::Score(hit.score),
        (SortBy::Doc, _) => SortValue::Doc(hit.global),
        (SortBy::Field { .. }, column) => SortValue::Int(numeric_key(key, column, hit.doc)),
        (SortBy::Keyword { .. }, Column::Keyword(c)) => {
            // Ids are not ordered in memory: the values themselves are compared.
            let ids = c.ids(hit.doc).to_vec();
            let terms = ids.iter().map(|&id| c.term(id));
            let picked = if key.descending { terms.max() } else { terms.min() };
            picked.map_or(SortValue::Missing, SortValue::Bytes)
        }
        (SortBy::Keyword { .. }, _) => SortValue::Missing,
    }
}
