//! The cost model of two-way Bloom filters (WiSER): whether a phrase
//! candidate is tested with a filter before its positions are read, and with
//! which one.
//!
//! Every pair of adjacent phrase terms `a b` may be tested two ways: `b` in
//! `after(a)` with a's filters, or `a` in `before(b)` with b's (a stop word is
//! never inserted, so never tested). Filters are read a block's group at a
//! time, positions a block at a time, from storage in 4 KiB pages, so what a
//! test costs and saves is counted in pages, per candidate, when the lists
//! can say what a read would add (`Postings::read_cost`): a rare term's whole
//! record is on the page its doc ids came from, a common term's next group is
//! often on the page of the last one.
//!
//! A page is shared by the candidates whose data lies on it: about `k` per
//! block of a term (its block's postings times the chance that a document
//! holds the other terms, taken as independent), so `k * 4096 / block bytes`
//! per page. A filter page costs each candidate its share. A positions page is
//! spared only when every candidate on it tests negative: with `m`
//! candidates on it and the phrase present in a fraction `p` of candidates,
//! `(1 - p)^m` of the page, `(1 - p)^m / m` for each candidate. (This is why
//! filters save little between two common terms: one positions page holds
//! many of their candidates, and one positive among them reads it.) The
//! cheaper of a pair's tests runs when it costs nothing or less than it
//! spares; `p` is estimated from the candidates seen so far in the segment,
//! from a prior of one in four.
//!
//! The rarest term's own filters can do more: `a` in `before(b)` is false
//! whenever `a` is not in the document at all, so testing b's documents
//! before the other lists seek to them spares those seeks (doc-id blocks of
//! common terms, a page each) as well as the positions. That early test runs
//! when b's filter group is on pages already read, or when b is so much
//! rarer than the others ([`EARLY_RATIO`]) that its filter section is small
//! beside the blocks of theirs it would make the query visit.

use needle_codecs::bloom::{term_hash, BloomParams, Side};
use needle_codecs::{Part, Postings, BLOCK_LEN};

use super::PhraseTerm;
use crate::PhraseQuery;

/// One way to test a pair: `hash` in the `side` filter of term `owner`.
struct FilterTest {
    owner: usize,
    side: Side,
    hash: u64,
}

/// How much rarer than every other phrase term the rarest must be for its
/// filters to be read ahead of the other lists' doc ids when not yet in
/// memory (lists too common to be that term keep no filters on disk).
pub use needle_codecs::bloom::EARLY_RATIO;

pub struct FilterPlan {
    /// The tests of each testable pair, the rarer owner first.
    pairs: Vec<Vec<FilterTest>>,
    /// Whether the rarest term's filters are worth reading before the others seek.
    early: bool,
    /// Candidates expected per block of each term.
    per_block: Vec<f32>,
    candidates: u32,
    matches: u32,
}

impl FilterPlan {
    /// The tests `params` allow for the exact phrase `p` over `terms` (its
    /// terms' lists, in the query's order) in a segment of `max_doc`
    /// documents; `None` when no pair can be tested.
    pub fn new(p: &PhraseQuery, terms: &[PhraseTerm], params: &BloomParams, max_doc: u32) -> Option<Self> {
        let df = |i: usize| terms[i].postings.doc_freq();
        let per_block = (0..terms.len())
            .map(|t| {
                let others: f64 = (0..terms.len())
                    .filter(|&i| i != t)
                    .map(|i| (f64::from(df(i)) / f64::from(max_doc.max(1))).min(1.0))
                    .product();
                (BLOCK_LEN as f64 * others) as f32
            })
            .collect();
        let mut pairs = Vec::new();
        for i in 0..p.terms.len().saturating_sub(1) {
            if p.terms[i + 1].0 != p.terms[i].0 + 1 {
                continue;
            }
            let (a, b) = (&p.terms[i].1, &p.terms[i + 1].1);
            let mut tests: Vec<FilterTest> = [(i, Side::After, b), (i + 1, Side::Before, a)]
                .into_iter()
                .filter(|(_, _, tested)| !params.is_stop_word(tested))
                .map(|(owner, side, tested)| FilterTest { owner, side, hash: term_hash(tested) })
                .collect();
            tests.sort_by_key(|t| df(t.owner));
            if !tests.is_empty() {
                pairs.push(tests);
            }
        }
        let rarest = (0..terms.len()).min_by_key(|&i| df(i));
        let early = rarest.is_some_and(|r| {
            (0..terms.len()).all(|i| i == r || u64::from(df(r)) * u64::from(EARLY_RATIO) <= u64::from(df(i)))
        });
        (!pairs.is_empty()).then_some(FilterPlan { pairs, early, per_block, candidates: 0, matches: 0 })
    }

    /// Whether a filter proves the phrase absent from the document all
    /// `terms` are on, testing only where the model expects a test to pay.
    pub fn rules_out(&mut self, terms: &mut [PhraseTerm]) -> bool {
        let absent = 1.0 - (self.matches as f32 + 1.0) / (self.candidates as f32 + 4.0);
        let spared: f32 = terms
            .iter()
            .zip(&self.per_block)
            .map(|(t, &k)| {
                let m = sharing(t.postings.as_ref(), Part::Positions, k);
                t.postings.read_cost(Part::Positions) as f32 * absent.powf(m) / m
            })
            .sum();
        for pair in &self.pairs {
            let cost = |t: &FilterTest| {
                let owner = terms[t.owner].postings.as_ref();
                owner.read_cost(Part::Filters) as f32 / sharing(owner, Part::Filters, self.per_block[t.owner])
            };
            // The cheaper test first; the other when the first posting keeps no filters.
            let mut tests = [pair.first(), pair.get(1)].map(|t| t.map(|t| (cost(t), t)));
            if let [Some(a), Some(b)] = &tests {
                if b.0 < a.0 {
                    tests.swap(0, 1);
                }
            }
            for (c, test) in tests.into_iter().flatten() {
                if c > 0.0 && c >= spared {
                    break;
                }
                match terms[test.owner].postings.bloom_test(test.side, test.hash) {
                    Some(false) => return true,
                    Some(true) => break,
                    None => continue,
                }
            }
        }
        false
    }

    /// Whether the filters of `lead`, the rarest term, rule out its current
    /// document before the other lists seek to it.
    pub fn rules_out_early(&mut self, terms: &mut [PhraseTerm], lead: usize) -> bool {
        let list = &mut terms[lead].postings;
        if !self.early && list.read_cost(Part::Filters) > 0 {
            return false;
        }
        let mut tests = self.pairs.iter().flatten().filter(|t| t.owner == lead);
        tests.any(|t| list.bloom_test(t.side, t.hash) == Some(false))
    }

    /// Records whether a candidate held the phrase.
    pub fn observe(&mut self, matched: bool) {
        self.candidates += 1;
        self.matches += u32::from(matched);
    }
}

/// Candidates sharing a page of `part` of `list`, `per_block` being expected per block.
fn sharing(list: &dyn Postings, part: Part, per_block: f32) -> f32 {
    let bytes = list.block_bytes(part).max(1) as f32;
    (per_block * 4096.0 / bytes).max(1.0)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use needle_codecs::bloom::FilterShape;
    use needle_codecs::{BlockImpact, Postings};
    use needle_core::{DocId, DocSet};

    use super::*;

    /// A list on one document whose reads cost what the test says, and whose
    /// filters answer `present`, counting the tests made of them.
    struct Fake {
        doc_freq: u32,
        positions_pages: u32,
        filter_pages: u32,
        block_bytes: usize,
        present: bool,
        tests: Arc<AtomicU32>,
    }

    impl DocSet for Fake {
        fn doc(&self) -> DocId {
            0
        }
        fn advance(&mut self) -> DocId {
            0
        }
        fn seek(&mut self, _: DocId) -> DocId {
            0
        }
        fn cost(&self) -> u64 {
            u64::from(self.doc_freq)
        }
    }

    impl Postings for Fake {
        fn doc_freq(&self) -> u32 {
            self.doc_freq
        }
        fn freq(&self) -> u32 {
            1
        }
        fn positions(&mut self, _: &mut Vec<u32>) {}
        fn offsets(&mut self, _: &mut Vec<(u32, u32)>) {}
        fn block_end(&mut self, _: DocId) -> DocId {
            0
        }
        fn impact(&mut self, _: DocId, _: DocId) -> BlockImpact {
            BlockImpact::NONE
        }
        fn max_impact(&self) -> BlockImpact {
            BlockImpact::NONE
        }
        fn total_term_freq(&self) -> u64 {
            u64::from(self.doc_freq)
        }
        fn read_cost(&self, part: Part) -> u32 {
            match part {
                Part::Positions => self.positions_pages,
                Part::Filters => self.filter_pages,
            }
        }
        fn block_bytes(&self, _: Part) -> usize {
            self.block_bytes
        }
        fn bloom_test(&mut self, _: Side, _: u64) -> Option<bool> {
            self.tests.fetch_add(1, Ordering::Relaxed);
            Some(self.present)
        }
        fn filters_into(&mut self, _: &mut Vec<u8>, _: &mut Vec<u8>) -> Option<FilterShape> {
            None
        }
    }

    /// The phrase `words`, each term's list as (doc freq, positions pages, filter pages).
    fn setup(
        words: [&str; 2],
        lists: [(u32, u32, u32); 2],
    ) -> (Option<FilterPlan>, Vec<PhraseTerm>, Vec<Arc<AtomicU32>>) {
        setup_with(words, lists, 4096)
    }

    /// The same with each block's positions and filters `block_bytes` long.
    fn setup_with(
        words: [&str; 2],
        lists: [(u32, u32, u32); 2],
        block_bytes: usize,
    ) -> (Option<FilterPlan>, Vec<PhraseTerm>, Vec<Arc<AtomicU32>>) {
        let query = PhraseQuery {
            field: 0,
            terms: words.iter().enumerate().map(|(i, w)| (i as u32, w.as_bytes().to_vec())).collect(),
            slop: 0,
        };
        let tests: Vec<Arc<AtomicU32>> = (0..2).map(|_| Arc::default()).collect();
        let terms: Vec<PhraseTerm> = lists
            .iter()
            .zip(&tests)
            .enumerate()
            .map(|(i, (&(doc_freq, positions_pages, filter_pages), tests))| PhraseTerm {
                postings: Box::new(Fake {
                    doc_freq,
                    positions_pages,
                    filter_pages,
                    block_bytes,
                    present: false,
                    tests: tests.clone(),
                }),
                offset: i as u32,
                stacked: false,
            })
            .collect();
        let params = BloomParams::for_rate(5, 0.0009, vec!["the".to_string()]);
        (FilterPlan::new(&query, &terms, &params, 1_000_000), terms, tests)
    }

    fn tested(tests: &[Arc<AtomicU32>]) -> [u32; 2] {
        [tests[0].load(Ordering::Relaxed), tests[1].load(Ordering::Relaxed)]
    }

    #[test]
    fn a_free_filter_is_tested_and_rules_out() {
        let (plan, mut terms, tests) = setup(["cheese", "curd"], [(50_000, 2, 0), (900, 1, 0)]);
        assert!(plan.unwrap().rules_out(&mut terms));
        assert_eq!(tested(&tests), [0, 1], "the rarer term's filters, both being free");
    }

    #[test]
    fn the_cheaper_direction_is_chosen() {
        let (plan, mut terms, tests) = setup(["cheese", "curd"], [(50_000, 3, 0), (900, 3, 1)]);
        assert!(plan.unwrap().rules_out(&mut terms));
        assert_eq!(tested(&tests), [1, 0], "the common term's filters are on a page already read");
    }

    #[test]
    fn a_group_shared_by_many_candidates_costs_each_a_share() {
        let (plan, mut terms, tests) = setup(["cheese", "curd"], [(50_000, 1, 3), (900, 1, 2)]);
        assert!(plan.unwrap().rules_out(&mut terms), "2 pages shared by 6.4 candidates of curd's group");
        assert_eq!(tested(&tests), [0, 1]);
    }

    #[test]
    fn a_filter_dearer_than_the_positions_is_not_read() {
        let (plan, mut terms, tests) = setup(["cheese", "curd"], [(5_000, 0, 3), (900, 1, 2)]);
        assert!(!plan.unwrap().rules_out(&mut terms));
        assert_eq!(tested(&tests), [0, 0]);
    }

    #[test]
    fn phrases_seen_present_make_a_filter_worth_less() {
        let (plan, mut terms, tests) = setup(["cheese", "curd"], [(5_000, 1, 5), (900, 1, 1)]);
        let mut plan = plan.unwrap();
        assert!(plan.rules_out(&mut terms), "1 page against 2 when the phrase is likely absent");
        for _ in 0..20 {
            plan.observe(true);
        }
        assert!(!plan.rules_out(&mut terms), "not when it has been present in most candidates");
        assert_eq!(tested(&tests), [0, 1]);
    }

    #[test]
    fn filters_do_not_spare_positions_pages_shared_by_many_candidates() {
        // 38 and 51 of a block's 128 postings are candidates; one in 200 holds the phrase.
        let common = [(400_000, 1, 1), (300_000, 1, 1)];
        let mut tested_with = Vec::new();
        for block_bytes in [4096, 300] {
            let (plan, mut terms, tests) = setup_with(["about", "another"], common, block_bytes);
            let mut plan = plan.unwrap();
            for i in 0..200 {
                plan.observe(i == 0);
            }
            plan.rules_out(&mut terms);
            tested_with.push(tested(&tests));
        }
        assert_eq!(tested_with[0], [0, 1], "a page a block: a block of 38 candidates is often all negative");
        assert_eq!(tested_with[1], [0, 0], "13 blocks a page: one positive among 500 candidates reads it");
    }

    #[test]
    fn a_much_rarer_term_tests_its_documents_before_the_others_seek() {
        let (plan, mut terms, tests) = setup(["cheese", "curd"], [(50_000, 1, 1), (900, 1, 1)]);
        assert!(plan.unwrap().rules_out_early(&mut terms, 1));
        assert_eq!(tested(&tests), [0, 1]);
        let (plan, mut terms, tests) = setup(["cheese", "curd"], [(5_000, 1, 1), (900, 1, 1)]);
        assert!(!plan.unwrap().rules_out_early(&mut terms, 1), "not rare enough to read its filters ahead");
        let (plan, mut terms, _) = setup(["cheese", "curd"], [(5_000, 1, 1), (900, 1, 0)]);
        assert!(plan.unwrap().rules_out_early(&mut terms, 1), "unless they are on pages already read");
        let (plan, mut terms, _) = setup(["the", "curd"], [(900_000, 1, 1), (900, 1, 0)]);
        assert!(!plan.unwrap().rules_out_early(&mut terms, 1), "curd holds no test of a stop word");
        assert_eq!(tested(&tests), [0, 0]);
    }

    #[test]
    fn stop_words_are_never_tested() {
        let (plan, mut terms, tests) = setup(["the", "curd"], [(900_000, 2, 0), (900, 2, 0)]);
        assert!(plan.unwrap().rules_out(&mut terms));
        assert_eq!(tested(&tests), [1, 0], "curd in after(the): the is in no filter");
        assert!(setup(["the", "the"], [(900_000, 2, 0), (900_000, 2, 0)]).0.is_none());
    }
}
