//! Scores one term's posting list with BM25.

use std::sync::Arc;

use needle_codecs::Postings;
use needle_core::{prefetch, DocId, DocSet, TERMINATED};

use needle_storage::counters::{self, DataKind};

use crate::bm25::Bm25;
use crate::{ScoreWindow, Scorer};

/// Norm byte of every document of a field without norms (keyword fields), as Lucene.
pub const NO_NORM: u8 = 1;

pub struct TermScorer<'a> {
    postings: Box<dyn Postings>,
    bm25: Arc<Bm25>,
    norms: Option<&'a [u8]>,
    /// The block last asked about: any target in `lo..=end` falls in it, and
    /// `bound` bounds its scores. Pruning asks about the same block for every
    /// candidate document; this answers without searching the skip list again.
    block: Option<(DocId, DocId, f32)>,
    /// Bound over the whole list.
    max_score: f32,
    impacts: Vec<(u32, u8)>,
    /// The last document whose norm was asked of memory ahead of scoring.
    norms_asked: Option<DocId>,
}

/// How many documents ahead a scorer asks for norms. A norm is a byte per
/// document of the segment, so the norms of a list's documents lie on as
/// many cache lines, each a miss when scored one after another; asked for
/// together, the memory serves them in parallel. Enough to cover a miss's
/// latency, few enough not to waste lines on a list scored only here and there.
const NORMS_AHEAD: usize = 16;

impl<'a> TermScorer<'a> {
    pub fn new(postings: Box<dyn Postings>, bm25: Arc<Bm25>, norms: Option<&'a [u8]>) -> Self {
        let mut s = TermScorer {
            postings,
            bm25,
            norms,
            block: None,
            max_score: 0.0,
            impacts: Vec::new(),
            norms_asked: None,
        };
        s.max_score = s.bound_over(0, TERMINATED - 1);
        s.max_score = s.max_score.min(s.lone_score().unwrap_or(f32::INFINITY));
        s
    }

    /// The score of a list's one document: a tighter bound than its impact,
    /// which a compact record of one document keeps without its norm.
    fn lone_score(&self) -> Option<f32> {
        let doc = self.postings.doc();
        if self.postings.doc_freq() != 1 || doc == TERMINATED {
            return None;
        }
        let norm = match self.norms {
            Some(norms) => *norms.get(doc as usize)?,
            None => NO_NORM,
        };
        Some(self.bm25.score(self.postings.freq() as f32, norm))
    }

    /// The best score any competitive (frequency, norm) pair of the blocks over `from..=to` allows.
    fn bound_over(&mut self, from: DocId, to: DocId) -> f32 {
        self.impacts.clear();
        self.postings.impacts(from, to, &mut self.impacts);
        let has_norms = self.norms.is_some();
        self.impacts
            .iter()
            .map(|&(freq, norm)| self.bm25.score(freq as f32, if has_norms { norm } else { NO_NORM }))
            .fold(0.0, f32::max)
    }

    /// Asks memory for the norms of the block's next documents, scoring
    /// `doc` past those asked for already.
    fn ask_norms_ahead(&mut self, norms: &[u8], doc: DocId) {
        if self.norms_asked.is_some_and(|last| doc < last) {
            return;
        }
        let ahead = self.postings.block_ahead();
        let ahead = &ahead[..ahead.len().min(NORMS_AHEAD)];
        for &d in ahead {
            prefetch(norms, d as usize);
        }
        self.norms_asked = Some(ahead.last().copied().unwrap_or(doc));
    }
}

impl DocSet for TermScorer<'_> {
    fn doc(&self) -> DocId {
        self.postings.doc()
    }
    fn advance(&mut self) -> DocId {
        self.postings.advance()
    }
    fn seek(&mut self, target: DocId) -> DocId {
        self.postings.seek(target)
    }
    fn cost(&self) -> u64 {
        self.postings.cost()
    }
}

impl Scorer for TermScorer<'_> {
    fn score(&mut self) -> f32 {
        let doc = self.postings.doc();
        counters::record_memory(DataKind::Norms, usize::from(self.norms.is_some()));
        let norm = match self.norms {
            Some(norms) => {
                self.ask_norms_ahead(norms, doc);
                norms[doc as usize]
            }
            None => NO_NORM,
        };
        let score = self.bm25.score(self.postings.freq() as f32, norm);
        // Pruning trusts the recorded bounds; a score above them means damaged
        // bytes (of an index opened without verifying every checksum).
        let bound = match self.block {
            Some((lo, end, bound)) if lo <= doc && doc <= end => bound,
            _ => self.max_score,
        };
        if score > bound {
            self.postings
                .record_damage(format!("doc {doc} scores {score}, above the bound {bound} of its impacts"));
            return bound;
        }
        score
    }

    fn max_score(&self) -> f32 {
        self.max_score
    }

    fn block_end(&mut self, target: DocId) -> DocId {
        match self.block {
            Some((lo, end, _)) if lo <= target && target <= end => end,
            _ => {
                let end = self.postings.block_end(target);
                let bound = self.bound_over(target, end);
                self.block = Some((target, end, bound));
                end
            }
        }
    }

    fn block_max_score(&mut self, from: DocId, to: DocId) -> f32 {
        match self.block {
            Some((lo, end, bound)) if lo <= from && to <= end => bound,
            _ => self.bound_over(from, to),
        }
    }

    /// A block at a time: its documents up to `last` scored in one loop,
    /// with no call per document through the postings.
    fn score_into(&mut self, last: DocId, window: &mut ScoreWindow) -> DocId {
        let mut doc = self.postings.doc();
        while doc <= last {
            let (docs, freqs) = self.postings.block_rest();
            if docs.is_empty() {
                window.add(doc, self.score());
                doc = self.postings.advance();
                continue;
            }
            let n = docs.partition_point(|&d| d <= last);
            // As `score`: a score above the list's bound means damaged bytes.
            let (bound, mut damaged) = (self.max_score, None);
            for (i, (&d, &f)) in docs[..n].iter().zip(&freqs[..n]).enumerate() {
                let norm = match self.norms {
                    Some(norms) => {
                        if let Some(&ahead) = docs.get(i + NORMS_AHEAD) {
                            prefetch(norms, ahead as usize);
                        }
                        norms[d as usize]
                    }
                    None => NO_NORM,
                };
                let score = self.bm25.score(f as f32, norm);
                if score > bound {
                    damaged = Some((d, score));
                }
                window.add(d, score.min(bound));
            }
            if let Some((d, score)) = damaged {
                self.postings
                    .record_damage(format!("doc {d} scores {score}, above the bound {bound} of its impacts"));
            }
            counters::record_memory(DataKind::Norms, n * usize::from(self.norms.is_some()));
            doc = self.postings.advance_by(n);
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use needle_codecs::postings::{write_record, DiskPostings};
    use needle_codecs::TermPostings;
    use needle_storage::FileSlice;

    use super::TermScorer;
    use crate::bm25::Bm25;
    use crate::Scorer;

    /// A list of one document is bounded by that document's score, though
    /// its record (a compact one, postings format 8) keeps no norm.
    #[test]
    fn a_list_of_one_document_is_bounded_by_its_score() {
        let p = TermPostings {
            docs: &[5],
            freqs: &[2],
            positions: &[1, 4],
            offsets: &[(3, 6), (20, 23)],
            bloom: None,
        };
        let mut bytes = Vec::new();
        write_record(&p, true, true, &[], &mut bytes);
        let postings = DiskPostings::open(&FileSlice::from_vec("t.post", bytes), 0, 10).unwrap();
        let norms = [40u8; 10];
        let mut scorer = TermScorer::new(Box::new(postings), Arc::new(Bm25::new(2.0, 30.0)), Some(&norms));
        let (bound, score) = (scorer.max_score(), scorer.score());
        assert_eq!(bound, score);
        assert!(scorer.bound_over(0, 9) > score, "the record's own impact is looser");
    }
}
