//! Phrase matching: documents holding all the phrase's terms (found by
//! leapfrogging), then confirmed with positions. The phrase frequency is
//! Lucene's: with slop 0 the number of positions where the phrase starts
//! (overlapping matches count); with slop N the sum of `1 / (1 + distance)`
//! over the sloppy matches, found as Lucene's SloppyPhraseMatcher finds them
//! for phrases without repeated terms.

use std::sync::Arc;

use needle_codecs::{BlockImpact, Postings};
use needle_core::{DocId, DocSet, TERMINATED};

use super::phrase_filters::FilterPlan;
use super::term::NO_NORM;
use needle_storage::counters::{self, DataKind};

use crate::bm25::Bm25;
use crate::Scorer;

pub struct PhraseTerm {
    pub postings: Box<dyn Postings>,
    /// The term's position in the phrase.
    pub offset: u32,
    /// Several terms' postings walked as one (a multi-phrase's place): two
    /// of them at one position of a document are two occurrences there.
    pub stacked: bool,
}

pub struct PhraseScorer<'a> {
    /// In the query's order.
    terms: Vec<PhraseTerm>,
    /// Indexes of `terms`, rarest first: the order documents are sought in.
    order: Vec<usize>,
    /// Bloom tests for exact phrases in segments with filters.
    filters: Option<FilterPlan>,
    bm25: Arc<Bm25>,
    norms: Option<&'a [u8]>,
    slop: u32,
    /// Some place holds several terms (see [`PhraseTerm::stacked`]).
    stacked: bool,
    doc: DocId,
    freq: f32,
    positions: Vec<Vec<u32>>,
}

impl<'a> PhraseScorer<'a> {
    pub fn new(
        terms: Vec<PhraseTerm>,
        filters: Option<FilterPlan>,
        bm25: Arc<Bm25>,
        norms: Option<&'a [u8]>,
        slop: u32,
    ) -> Self {
        let n = terms.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| terms[i].postings.cost());
        let start = terms.iter().map(|t| t.postings.doc()).max().unwrap_or(TERMINATED);
        let filters = filters.filter(|_| slop == 0);
        let positions = vec![Vec::new(); n];
        let stacked = terms.iter().any(|t| t.stacked);
        let mut s =
            PhraseScorer { terms, order, filters, bm25, norms, slop, stacked, doc: 0, freq: 0.0, positions };
        s.doc = s.next_match(start);
        s
    }

    pub fn freq(&self) -> f32 {
        self.freq
    }

    /// The first document `>= target` where the phrase occurs.
    fn next_match(&mut self, mut target: DocId) -> DocId {
        loop {
            target = self.align(target);
            if target == TERMINATED {
                return TERMINATED;
            }
            if let Some(plan) = &mut self.filters {
                if plan.rules_out(&mut self.terms) {
                    plan.observe(false);
                    target += 1;
                    continue;
                }
            }
            self.freq = self.phrase_freq();
            if let Some(plan) = &mut self.filters {
                plan.observe(self.freq > 0.0);
            }
            if self.freq > 0.0 {
                return target;
            }
            target += 1;
        }
    }

    /// The first document `>= target` holding every term, all lists on it.
    /// The rarest term's filters may rule a document out before the other
    /// lists move to it (see `FilterPlan::rules_out_early`).
    fn align(&mut self, mut target: DocId) -> DocId {
        'outer: loop {
            if target == TERMINATED {
                return TERMINATED;
            }
            for (n, &i) in self.order.iter().enumerate() {
                let d = self.terms[i].postings.seek(target);
                if d > target {
                    target = d;
                    continue 'outer;
                }
                if n == 0 && self.filters.as_mut().is_some_and(|f| f.rules_out_early(&mut self.terms, i)) {
                    target += 1;
                    continue 'outer;
                }
            }
            return target;
        }
    }

    fn phrase_freq(&mut self) -> f32 {
        for (t, buf) in self.terms.iter_mut().zip(&mut self.positions) {
            t.postings.positions(buf);
        }
        let lists: Vec<(u32, &[u32])> =
            self.terms.iter().zip(&self.positions).map(|(t, p)| (t.offset, p.as_slice())).collect();
        if self.slop == 0 {
            let mut count = 0u32;
            exact_matches(&lists, |_| count += 1);
            count as f32
        } else {
            sloppy_freq(&lists, self.slop)
        }
    }

    /// A bound on the phrase's score from its terms' bounds. An exact match
    /// takes an occurrence of every term, so the phrase's frequency is at most
    /// the rarest term's; a sloppy one counts each match (at most 1) with
    /// every position able to head one, so it is at most the sum of the
    /// terms' frequencies (Lucene's `SloppyPhraseMatcher.maxFreq`). A document
    /// holding every term is no shorter than the longest of their shortest.
    fn bound(&self, impacts: impl Iterator<Item = BlockImpact>) -> f32 {
        let (mut min_freq, mut sum_freq, mut norm) = (u32::MAX, 0u64, 0u8);
        let mut lead_freq = None;
        for i in impacts {
            lead_freq.get_or_insert(i.max_freq);
            min_freq = min_freq.min(i.max_freq);
            sum_freq += u64::from(i.max_freq);
            norm = norm.max(i.min_norm);
        }
        if min_freq == 0 {
            return 0.0;
        }
        // Two terms of a stacked place at one position start two matches
        // when that place leads the phrase (Lucene counts each occurrence of
        // its lead): then only the lead's occurrences bound the matches.
        let exact = match self.stacked {
            true => lead_freq.unwrap_or(0),
            false => min_freq,
        };
        let freq = if self.slop == 0 { exact as f32 } else { sum_freq as f32 };
        let norm = if self.norms.is_some() { norm } else { NO_NORM };
        self.bm25.score(freq, norm)
    }
}

/// Calls `emit(start)` for every start position of an exact match of the
/// phrase whose terms have the positions `lists` (each with its offset in the phrase).
pub fn exact_matches(lists: &[(u32, &[u32])], mut emit: impl FnMut(i64)) {
    let Some(((first_off, first), rest)) = lists.split_first() else { return };
    let mut cursors = vec![0usize; rest.len()];
    'starts: for &p in *first {
        let start = i64::from(p) - i64::from(*first_off);
        for ((off, list), cur) in rest.iter().zip(cursors.iter_mut()) {
            let want = start + i64::from(*off);
            while *cur < list.len() && i64::from(list[*cur]) < want {
                *cur += 1;
            }
            if *cur == list.len() {
                return;
            }
            if i64::from(list[*cur]) != want {
                continue 'starts;
            }
        }
        emit(start);
    }
}

/// Lucene's sloppy frequency for phrases without repeated terms.
pub fn sloppy_freq(lists: &[(u32, &[u32])], slop: u32) -> f32 {
    if lists.iter().any(|(_, l)| l.is_empty()) {
        return 0.0;
    }
    let n = lists.len();
    let mut idx = vec![0usize; n];
    let pos = |i: usize, idx: &[usize]| i64::from(lists[i].1[idx[i]]) - i64::from(lists[i].0);
    let mut end = (0..n).map(|i| pos(i, &idx)).max().unwrap();
    let slop = i64::from(slop);
    let mut freq = 0f32;
    let order = |idx: &[usize]| {
        let mut o: Vec<usize> = (0..n).collect();
        o.sort_by_key(|&i| (pos(i, idx), lists[i].0, i));
        o
    };
    let mut o = order(&idx);
    let mut pp = o[0];
    let mut next = if n > 1 { pos(o[1], &idx) } else { i64::MAX };
    let mut match_length = end - pos(pp, &idx);
    loop {
        idx[pp] += 1;
        if idx[pp] == lists[pp].1.len() {
            break;
        }
        let p = pos(pp, &idx);
        end = end.max(p);
        if p > next {
            if match_length <= slop {
                freq += 1.0 / (1.0 + match_length as f32);
            }
            o = order(&idx);
            pp = o[0];
            next = if n > 1 { pos(o[1], &idx) } else { i64::MAX };
            match_length = end - pos(pp, &idx);
        } else {
            match_length = match_length.min(end - p);
        }
    }
    if match_length <= slop {
        freq += 1.0 / (1.0 + match_length as f32);
    }
    freq
}

impl DocSet for PhraseScorer<'_> {
    fn doc(&self) -> DocId {
        self.doc
    }

    fn advance(&mut self) -> DocId {
        if self.doc != TERMINATED {
            self.doc = self.next_match(self.doc + 1);
        }
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if target > self.doc {
            self.doc = self.next_match(target);
        }
        self.doc
    }

    fn cost(&self) -> u64 {
        self.order.first().map_or(0, |&i| self.terms[i].postings.cost())
    }
}

impl Scorer for PhraseScorer<'_> {
    fn score(&mut self) -> f32 {
        counters::record_memory(DataKind::Norms, usize::from(self.norms.is_some()));
        let norm = self.norms.map_or(NO_NORM, |n| n[self.doc as usize]);
        let score = self.bm25.score(self.freq, norm);
        // Pruning trusts the terms' recorded bounds; a score above them means
        // damaged bytes (of an index opened without verifying every checksum).
        let bound = self.max_score();
        if score > bound {
            let what =
                format!("doc {} scores {score} in a phrase, above the bound {bound} of its terms", self.doc);
            self.terms[0].postings.record_damage(what);
            return bound;
        }
        score
    }

    fn max_score(&self) -> f32 {
        self.bound(self.terms.iter().map(|t| t.postings.max_impact()))
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.terms.iter_mut().map(|t| t.postings.block_end(target)).min().unwrap_or(TERMINATED)
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        let impacts: Vec<_> = self.terms.iter_mut().map(|t| t.postings.impact(from, to)).collect();
        self.bound(impacts.into_iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_exact_matches_count() {
        // "a a" in "a a a b a a": a at 0,1,2,4,5 -> starts 0, 1, 4.
        let a = [0, 1, 2, 4, 5];
        let mut starts = Vec::new();
        exact_matches(&[(0, &a), (1, &a)], |s| starts.push(s));
        assert_eq!(starts, [0, 1, 4]);
    }

    #[test]
    fn sloppy_counts_near_matches() {
        // "a b"~1 over "a x b": one match at distance 1.
        assert_eq!(sloppy_freq(&[(0, &[0]), (1, &[2])], 1), 0.5);
        assert_eq!(sloppy_freq(&[(0, &[0]), (1, &[3])], 1), 0.0);
        // exact adjacency counts fully.
        assert_eq!(sloppy_freq(&[(0, &[4]), (1, &[5])], 2), 1.0);
    }
}
