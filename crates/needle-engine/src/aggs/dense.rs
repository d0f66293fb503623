//! A histogram's buckets in one segment, counted in an array: a slot per
//! step of the interval between the smallest and the largest bucket met,
//! each with the sums of the metrics below it. A document costs a division
//! and a few adds; no key is looked up until the segment ends, when the
//! slots that counted anything become buckets ([`Dense::drain`]).
//!
//! Taken for a batch of documents only where it answers exactly as a
//! bucket per key does: at most one value a document, every
//! sub-aggregation a metric, no hard bounds; a `histogram`, or a
//! `date_histogram` (calendar buckets numbered through a `Grid`). The
//! slots are bounded by the documents counted (a few per document), so a
//! sparse histogram, or one under each of many buckets, keeps its buckets
//! by key instead; both kinds of batch may meet in one segment.

use needle_codecs::doc_values::{double_to_sortable, sortable_to_double, ValueBatch};

use super::grid::Grid;
use super::tally::Tally;
use super::{AggField, AggKind, DateInterval};
use crate::schema::FieldKind;
use crate::zone::Zone;

/// How a value's bucket is numbered, and the key of a bucket by number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Step {
    /// `histogram`: bucket `floor((x - offset) / interval)`.
    Histogram { interval: f64, offset: f64, double: bool },
    /// `date_histogram` of a fixed interval in UTC: bucket `(v - offset) div ms`.
    Fixed { ms: i64, offset: i64 },
    /// Any other `date_histogram` (a calendar unit, or a time zone): buckets
    /// numbered by a [`Grid`] of them.
    Calendar { interval: DateInterval, zone: Zone, offset: i64 },
}

/// Quotients past this are not numbered here (exactly up to 2^52, but
/// [`floor_quotient`]'s rounding holds to 2^51); a histogram of them keeps
/// its buckets by key.
const EXACT: f64 = (1u64 << 51) as f64;

impl Step {
    pub fn of(kind: &AggKind) -> Option<Step> {
        match *kind {
            AggKind::Histogram { field, interval, offset, hard_bounds: None, .. } => {
                Some(Step::Histogram { interval, offset, double: field.kind == FieldKind::Double })
            }
            AggKind::DateHistogram {
                interval: DateInterval::Fixed(ms),
                zone: Zone::UTC,
                offset,
                hard_bounds: None,
                ..
            } => Some(Step::Fixed { ms, offset }),
            AggKind::DateHistogram { interval, zone, offset, hard_bounds: None, .. } => {
                Some(Step::Calendar { interval, zone, offset })
            }
            _ => None,
        }
    }

    /// The bucket numbers of `values`, into `out`, and the smallest and
    /// largest; none when one has no exact number (a NaN, a quotient past
    /// 2^51).
    #[inline(always)]
    fn numbers(self, values: impl Iterator<Item = i64>, out: &mut Vec<i64>) -> Option<(i64, i64)> {
        match self {
            Step::Histogram { interval, offset, double: true } => {
                number_each(values, out, |v| floor_quotient(sortable_to_double(v), offset, interval))
            }
            Step::Histogram { interval, offset, double: false } => {
                number_each(values, out, |v| floor_quotient(v as f64, offset, interval))
            }
            Step::Fixed { ms, offset } => {
                number_each(values, out, |v| v.saturating_sub(offset).div_euclid(ms))
            }
            Step::Calendar { .. } => unreachable!("calendar buckets are numbered by their grid"),
        }
    }

    /// The key of bucket `n`: what `histogram_key`, `fixed_key` or a search
    /// among the buckets (`Spans`) gives its values.
    fn key(self, n: i64, grid: Option<&Grid>) -> i64 {
        match self {
            Step::Histogram { interval, offset, .. } => double_to_sortable(n as f64 * interval + offset),
            Step::Fixed { ms, offset } => n.saturating_mul(ms).saturating_add(offset),
            Step::Calendar { offset, .. } => {
                grid.expect("a grid numbered it").start(n).saturating_add(offset)
            }
        }
    }
}

/// `floor((x - offset) / interval)`, [`NO_NUMBER`] past [`EXACT`]: without
/// a branch or a conversion the baseline x86-64 target lacks in vector
/// form, so that a loop of them runs two to a vector register.
#[inline(always)]
fn floor_quotient(x: f64, offset: f64, interval: f64) -> i64 {
    let q = (x - offset) / interval;
    // Below 2^51 in magnitude, q + ROUNDER is q rounded to an integer in
    // the low bits of a double whose exponent is ROUNDER's.
    let t = q + ROUNDER;
    let nearest = (t.to_bits() as i64).wrapping_sub(ROUNDER.to_bits() as i64);
    let n = nearest - i64::from(t - ROUNDER > q);
    if q.abs() < EXACT {
        n
    } else {
        NO_NUMBER
    }
}

/// 2^52 + 2^51: see [`floor_quotient`].
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// What a value without an exact bucket number is numbered.
const NO_NUMBER: i64 = i64::MIN;

/// `number` of each of `values`, into `out`, and the smallest and largest
/// (none when one is [`NO_NUMBER`]).
#[inline(always)]
fn number_each(
    values: impl Iterator<Item = i64>,
    out: &mut Vec<i64>,
    number: impl Fn(i64) -> i64,
) -> Option<(i64, i64)> {
    out.clear();
    // Numbered first, bounded after: the numbering then carries nothing
    // from one value to the next, and runs in vectors.
    out.extend(values.map(number));
    let (lo, hi) = extremes(out)?;
    (lo != NO_NUMBER).then_some((lo, hi))
}

/// The smallest and the largest of `values` (none when empty), found in
/// four lanes: one lane's compares wait on each other, four lanes' do not.
/// The baseline target has no vector compare of 64-bit numbers.
#[inline(always)]
pub(super) fn extremes(values: &[i64]) -> Option<(i64, i64)> {
    let first = *values.first()?;
    let (mut lo, mut hi) = ([first; 4], [first; 4]);
    let chunks = values.chunks_exact(4);
    for &v in chunks.remainder() {
        (lo[0], hi[0]) = (lo[0].min(v), hi[0].max(v));
    }
    for chunk in chunks {
        for lane in 0..4 {
            (lo[lane], hi[lane]) = (lo[lane].min(chunk[lane]), hi[lane].max(chunk[lane]));
        }
    }
    Some((lo.into_iter().min()?, hi.into_iter().max()?))
}

/// A metric's figures over the values of one slot.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sums {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Sums {
    pub(super) const NONE: Sums = Sums { count: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY };

    #[inline(always)]
    pub(super) fn add(&mut self, x: f64) {
        self.count += 1;
        self.sum += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// Adds the figures of other values.
    pub(super) fn merge(&mut self, other: Sums) {
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// The slots of one segment; see the module documentation.
#[derive(Debug, Clone, Default)]
pub(super) struct Dense {
    step: Option<Step>,
    /// A calendar step's buckets (kept from one segment to the next).
    grid: Option<Grid>,
    /// The bucket number of slot 0.
    first: i64,
    /// Documents by slot.
    counts: Tally,
    /// Each metric sub-aggregation's sums, by slot.
    metrics: Vec<Vec<Sums>>,
    /// Documents counted since the last drain.
    docs: u64,
    /// The batch's bucket numbers, and its documents with a value (kept
    /// from one batch to the next).
    numbers: Vec<i64>,
    valued: Vec<u32>,
}

/// Slots allowed beyond four a document counted.
const SLACK: i64 = 64;

impl Dense {
    /// Counts the documents `rows` of a batch (their values in `values`,
    /// their sub-aggregations' in `subs`); false, with nothing counted, when
    /// a document has several values, or the slots would be too many for
    /// the documents.
    pub fn add(
        &mut self,
        step: Step,
        values: &ValueBatch,
        rows: &[u32],
        subs: &[(&ValueBatch, AggField)],
    ) -> bool {
        if self.step.is_some_and(|s| s != step) {
            return false;
        }
        let (mut numbers, mut valued) = (std::mem::take(&mut self.numbers), std::mem::take(&mut self.valued));
        let ok = match values.singles() {
            // Every document of the batch (the usual case of a query matching all).
            Some(singles) if singles.len() == rows.len() => {
                self.number(step, singles.iter().copied(), &mut numbers, rows.len())
            }
            Some(singles) => {
                self.number(step, rows.iter().map(|&r| singles[r as usize]), &mut numbers, rows.len())
            }
            // Documents without a value count nowhere.
            None => {
                valued.clear();
                valued.extend(rows.iter().copied().filter(|&r| !values.doc(r as usize).is_empty()));
                valued.iter().all(|&r| values.doc(r as usize).len() == 1)
                    && self.number(
                        step,
                        valued.iter().map(|&r| values.doc(r as usize)[0]),
                        &mut numbers,
                        valued.len(),
                    )
            }
        };
        if ok {
            self.step = Some(step);
            let counted = if values.singles().is_some() { rows } else { &valued };
            self.count(&mut numbers, counted, subs);
        }
        (self.numbers, self.valued) = (numbers, valued);
        ok
    }

    /// Numbers `values` (of `n` documents) into `numbers` and makes their slots; false when it cannot.
    #[inline(always)]
    fn number(
        &mut self,
        step: Step,
        values: impl Iterator<Item = i64>,
        numbers: &mut Vec<i64>,
        n: usize,
    ) -> bool {
        let bounds = match step {
            Step::Calendar { interval, zone, offset } => {
                let instants = values.map(|v| v.saturating_sub(offset));
                self.number_in_grid(interval, zone, instants, numbers, n)
            }
            _ => step.numbers(values, numbers),
        };
        match bounds {
            Some(bounds) => self.cover(bounds, n),
            None => n == 0,
        }
    }

    /// The numbers of the buckets of `instants` in the grid (grown to hold
    /// them), into `numbers`, and the smallest and largest.
    fn number_in_grid(
        &mut self,
        interval: DateInterval,
        zone: Zone,
        instants: impl Iterator<Item = i64>,
        numbers: &mut Vec<i64>,
        n: usize,
    ) -> Option<(i64, i64)> {
        numbers.clear();
        numbers.extend(instants);
        let (lo, hi) = extremes(numbers)?;
        // The step, and so the grid's interval and zone, is one per aggregation (`add`).
        let grid = self.grid.as_ref();
        if !grid.is_some_and(|g| g.holds(lo) && g.holds(hi)) {
            let most = usize::try_from(self.allowed(n)).ok()?;
            self.grid = Some(Grid::covering(interval, zone, grid, (lo, hi), most)?);
        }
        let grid = self.grid.as_ref()?;
        numbers.iter_mut().for_each(|t| *t = grid.number(*t));
        Some((grid.number(lo), grid.number(hi)))
    }

    /// The slots allowed once `more` documents are counted.
    fn allowed(&self, more: usize) -> i64 {
        SLACK.saturating_add(4i64.saturating_mul((self.docs + more as u64) as i64))
    }

    /// Makes slots for every bucket number from `lo` to `hi`, if that many
    /// are allowed once `more` documents are counted.
    fn cover(&mut self, (lo, hi): (i64, i64), more: usize) -> bool {
        let (start, end) = match self.counts.is_empty() {
            true => (lo, hi),
            false => (lo.min(self.first), hi.max(self.first + self.counts.len() as i64 - 1)),
        };
        if end.checked_sub(start).is_none_or(|span| span >= self.allowed(more)) {
            return false;
        }
        let len = (end - start + 1) as usize;
        let front = match self.counts.is_empty() {
            true => 0,
            false => (self.first - start) as usize,
        };
        self.counts.grow(front, len);
        for sums in &mut self.metrics {
            grow(sums, front, len, Sums::NONE);
        }
        self.first = start;
        true
    }

    /// Counts the batch's documents `rows`, numbered `numbers` (made their slots here).
    fn count(&mut self, numbers: &mut [i64], rows: &[u32], subs: &[(&ValueBatch, AggField)]) {
        numbers.iter_mut().for_each(|n| *n -= self.first);
        let slots = self.counts.len();
        self.counts.add(numbers, slots);
        self.docs += rows.len() as u64;
        self.metrics.resize_with(subs.len(), || vec![Sums::NONE; self.counts.len()]);
        for ((values, field), sums) in subs.iter().zip(&mut self.metrics) {
            match (values.singles(), field.kind == FieldKind::Double) {
                (Some(v), true) => add_each(sums, numbers, rows, |r| sortable_to_double(v[r])),
                (Some(v), false) => add_each(sums, numbers, rows, |r| v[r] as f64),
                (None, _) => {
                    for (&slot, &r) in numbers.iter().zip(rows) {
                        let slot = &mut sums[slot as usize];
                        values.doc(r as usize).iter().for_each(|&v| slot.add(field.number(v)));
                    }
                }
            }
        }
    }

    /// The buckets counted since the last drain: (key, documents, each
    /// metric's sums); the slots are emptied for the next segment.
    pub fn drain(&mut self) -> Vec<(i64, u64, Vec<Sums>)> {
        let (Some(step), first) = (self.step, self.first) else { return Vec::new() };
        let mut counts = std::mem::take(&mut self.counts);
        let metrics = std::mem::take(&mut self.metrics);
        self.docs = 0;
        let grid = self.grid.as_ref();
        counts
            .drain()
            .map(|(slot, c)| {
                (step.key(first + slot as i64, grid), c, metrics.iter().map(|m| m[slot]).collect())
            })
            .collect()
    }
}

/// Adds `value(row)` of each of `rows` to the sums of its slot (in `slots`).
#[inline(always)]
fn add_each(sums: &mut [Sums], slots: &[i64], rows: &[u32], value: impl Fn(usize) -> f64) {
    for (&slot, &r) in slots.iter().zip(rows) {
        sums[slot as usize].add(value(r as usize));
    }
}

/// Makes `v` `len` long with `front` new slots before its current ones.
pub(super) fn grow<T: Clone>(v: &mut Vec<T>, front: usize, len: usize, empty: T) {
    if front > 0 {
        v.splice(0..0, std::iter::repeat_n(empty.clone(), front));
    }
    v.resize(len, empty);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn floor_quotient_floors_as_a_division_does(
            x in prop_oneof![any::<f64>(), -1e6f64..1e6, (-1000i64..1000).prop_map(|i| i as f64 * 2.5)],
            offset in prop_oneof![Just(0.0), -100.0f64..100.0],
            interval in prop_oneof![Just(10.0), Just(2.5), Just(0.1), 1e-3f64..1e9],
        ) {
            let q = (x - offset) / interval;
            let want = if q.abs() < EXACT { q.floor() as i64 } else { NO_NUMBER };
            prop_assert_eq!(floor_quotient(x, offset, interval), want);
        }
    }

    proptest! {
        #[test]
        fn extremes_are_the_smallest_and_largest(values in prop::collection::vec(any::<i64>(), 0..40)) {
            let want = values.iter().min().copied().zip(values.iter().max().copied());
            prop_assert_eq!(extremes(&values), want);
        }
    }

    #[test]
    fn quotients_next_to_an_integer_floor_to_the_right_side() {
        for n in [-3.0f64, -1.0, 0.0, 1.0, 7.0, 1e15] {
            for q in [
                n,
                f64::from_bits(n.to_bits() + 1),
                f64::from_bits(n.to_bits().wrapping_sub(1)),
                n - 0.5,
                n + 0.5,
            ] {
                let want = if q.abs() < EXACT { q.floor() as i64 } else { NO_NUMBER };
                assert_eq!(floor_quotient(q, 0.0, 1.0), want, "{q}");
            }
        }
    }
}
