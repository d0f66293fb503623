//! Several terms' posting lists walked as one (Lucene's UnionPostingsEnum):
//! the documents of any of them, a document's frequency the sum of the
//! terms' frequencies there, its positions all of theirs in order. What a
//! position of several terms in a query reads (synonyms, n-grams, a folded
//! term beside its original): scored as one term by a [`TermScorer`](super::TermScorer)
//! (Lucene's SynonymQuery), or one place of a phrase (its MultiPhraseQuery).

use needle_codecs::bloom::{FilterShape, Side};
use needle_codecs::{BlockImpact, Part, Postings};
use needle_core::{DocId, DocSet, TERMINATED};

pub struct UnionPostings {
    /// A handful: the terms of one position.
    lists: Vec<Box<dyn Postings>>,
    doc: DocId,
    positions: Vec<u32>,
    offsets: Vec<(u32, u32)>,
}

impl UnionPostings {
    pub fn new(lists: Vec<Box<dyn Postings>>) -> Self {
        let mut u = UnionPostings { lists, doc: 0, positions: Vec::new(), offsets: Vec::new() };
        u.settle();
        u
    }

    fn settle(&mut self) -> DocId {
        self.doc = self.lists.iter().map(|l| l.doc()).min().unwrap_or(TERMINATED);
        self.doc
    }

    fn on_doc(&mut self) -> impl Iterator<Item = &mut Box<dyn Postings>> {
        let doc = self.doc;
        self.lists.iter_mut().filter(move |l| l.doc() == doc && doc != TERMINATED)
    }

    /// The lists' bounds combined: frequencies add up, the shortest document counts.
    fn combined(impacts: impl Iterator<Item = BlockImpact>) -> BlockImpact {
        impacts.filter(|i| i.max_freq > 0).fold(BlockImpact::NONE, |acc, i| BlockImpact {
            max_freq: acc.max_freq.saturating_add(i.max_freq),
            min_norm: acc.min_norm.min(i.min_norm),
        })
    }
}

impl DocSet for UnionPostings {
    fn doc(&self) -> DocId {
        self.doc
    }

    fn advance(&mut self) -> DocId {
        for list in self.on_doc() {
            list.advance();
        }
        self.settle()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        for list in self.lists.iter_mut().filter(|l| l.doc() < target) {
            list.seek(target);
        }
        self.settle()
    }

    fn cost(&self) -> u64 {
        self.lists.iter().map(|l| l.cost()).sum()
    }
}

impl Postings for UnionPostings {
    /// At least the documents' number (exact for lists that share none).
    fn doc_freq(&self) -> u32 {
        self.lists.iter().fold(0u32, |n, l| n.saturating_add(l.doc_freq()))
    }

    fn freq(&self) -> u32 {
        let doc = self.doc;
        self.lists.iter().filter(|l| l.doc() == doc && doc != TERMINATED).map(|l| l.freq()).sum()
    }

    /// Every term's positions, ascending; a position two terms share comes twice, as in Lucene.
    fn positions(&mut self, out: &mut Vec<u32>) {
        out.clear();
        let mut one = std::mem::take(&mut self.positions);
        for list in self.on_doc() {
            list.positions(&mut one);
            out.extend_from_slice(&one);
        }
        self.positions = one;
        out.sort_unstable();
    }

    fn offsets(&mut self, out: &mut Vec<(u32, u32)>) {
        let (mut positions, mut offsets) =
            (std::mem::take(&mut self.positions), std::mem::take(&mut self.offsets));
        let mut pairs = Vec::new();
        for list in self.on_doc() {
            list.positions(&mut positions);
            list.offsets(&mut offsets);
            pairs.extend(positions.iter().copied().zip(offsets.iter().copied()));
        }
        (self.positions, self.offsets) = (positions, offsets);
        pairs.sort_unstable();
        out.clear();
        out.extend(pairs.into_iter().map(|(_, o)| o));
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        self.lists.iter_mut().map(|l| l.block_end(target)).min().unwrap_or(TERMINATED)
    }

    fn impact(&mut self, from: DocId, to: DocId) -> BlockImpact {
        let impacts: Vec<BlockImpact> = self.lists.iter_mut().map(|l| l.impact(from, to)).collect();
        Self::combined(impacts.into_iter())
    }

    fn max_impact(&self) -> BlockImpact {
        Self::combined(self.lists.iter().map(|l| l.max_impact()))
    }

    fn total_term_freq(&self) -> u64 {
        self.lists.iter().map(|l| l.total_term_freq()).sum()
    }

    fn read_cost(&self, part: Part) -> u32 {
        self.lists.iter().map(|l| l.read_cost(part)).sum()
    }

    /// A union has no phrase filters of its own (a phrase with one tests none).
    fn bloom_test(&mut self, _side: Side, _hash: u64) -> Option<bool> {
        None
    }

    fn filters_into(&mut self, _before: &mut Vec<u8>, _after: &mut Vec<u8>) -> Option<FilterShape> {
        None
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use needle_codecs::postings::{write_record, DiskPostings};
    use needle_codecs::{Postings, TermPostings};
    use needle_core::{DocSet, TERMINATED};
    use needle_storage::FileSlice;

    use super::UnionPostings;
    use crate::bm25::Bm25;
    use crate::iter::TermScorer;
    use crate::Scorer;

    /// A list whose document `d` holds the term at `positions[i]` (`docs[i] = d`).
    fn list(docs: &[u32], positions: &[&[u32]]) -> Box<dyn Postings> {
        let freqs: Vec<u32> = positions.iter().map(|p| p.len() as u32).collect();
        let flat: Vec<u32> = positions.iter().flat_map(|p| p.iter().copied()).collect();
        let offsets: Vec<(u32, u32)> = flat.iter().map(|&p| (p * 10, p * 10 + 3)).collect();
        let p = TermPostings { docs, freqs: &freqs, positions: &flat, offsets: &offsets, bloom: None };
        let mut bytes = Vec::new();
        write_record(&p, true, true, &[], &mut bytes);
        Box::new(DiskPostings::open(&FileSlice::from_vec("t.post", bytes), 0, 10).unwrap())
    }

    #[test]
    fn walks_the_union_summing_frequencies_and_merging_positions() {
        let mut u =
            UnionPostings::new(vec![list(&[1, 4], &[&[2, 7], &[0]]), list(&[4, 7], &[&[0, 5, 6], &[1]])]);
        let mut seen = Vec::new();
        let (mut positions, mut offsets) = (Vec::new(), Vec::new());
        while u.doc() != TERMINATED {
            u.positions(&mut positions);
            u.offsets(&mut offsets);
            assert_eq!(offsets.len(), positions.len());
            seen.push((u.doc(), u.freq(), positions.clone()));
            u.advance();
        }
        assert_eq!(seen, vec![(1, 2, vec![2, 7]), (4, 4, vec![0, 0, 5, 6]), (7, 1, vec![1])]);
        let mut u = UnionPostings::new(vec![list(&[1, 4], &[&[0], &[0]]), list(&[4, 7], &[&[0], &[0]])]);
        assert_eq!(u.seek(5), 7);
        assert_eq!(u.seek(8), TERMINATED);
    }

    /// Scored as one term: the summed frequency, within the combined impacts.
    #[test]
    fn a_term_scorer_over_the_union_scores_the_summed_frequency() {
        let bm25 = Arc::new(Bm25::new(2.0, 3.0));
        let union = UnionPostings::new(vec![list(&[4], &[&[1]]), list(&[4, 9], &[&[2, 3], &[1]])]);
        let mut s = TermScorer::new(Box::new(union), bm25.clone(), None);
        assert_eq!(s.score(), bm25.score(3.0, super::super::term::NO_NORM));
        assert!(s.max_score() >= s.score());
    }
}
