//! Every document of a segment, each scoring 1.

use needle_core::{DocId, TERMINATED};

use super::filter::{FilterScorer, Matcher};

/// Matches every document below `max_doc`.
pub struct Every {
    max_doc: DocId,
}

impl Matcher for Every {
    fn next_match(&mut self, from: DocId) -> DocId {
        if from < self.max_doc {
            from
        } else {
            TERMINATED
        }
    }
    fn fill_matches(&mut self, from: DocId, out: &mut Vec<DocId>, max: usize) -> DocId {
        let end = self.max_doc.min(from.saturating_add(max.saturating_sub(out.len()) as DocId));
        out.extend(from..end.max(from));
        self.next_match(end.max(from))
    }
    fn cost(&self) -> u64 {
        u64::from(self.max_doc)
    }
}

pub type AllScorer = FilterScorer<Every>;

impl AllScorer {
    /// Every document's score is `score` (1, times the boosts around the query).
    pub fn new(max_doc: DocId, score: f32) -> Self {
        FilterScorer::with(Every { max_doc }, score)
    }
}
