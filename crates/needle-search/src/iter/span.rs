//! Span matching, as Lucene's span queries match for what Elasticsearch
//! makes of a phrase without slop over a graph of terms: a term's spans
//! (one position each), any of several spans (SpanOrQuery), and spans one
//! right after another, in order (SpanNearQuery, ordered, slop 0).
//!
//! A document is a candidate when its terms allow a match (all parts of a
//! near there, any of an or's). Its spans are then listed bottom up in the
//! order Lucene's iterators give them, so that the matches counted are the
//! ones Lucene's lazy walk finds (NearSpansOrdered): an or's spans merged by
//! start, then end; a near's found by walking its first part's spans, each
//! later part's cursor only moving forward to start where the part before
//! it ended, the walk over once a part runs out. Not every match of every
//! path is found that way, and Lucene's frequency counts only those found.

use std::sync::Arc;

use needle_codecs::Postings;
use needle_core::{DocId, DocSet, TERMINATED};
use needle_storage::counters::{self, DataKind};

use super::term::NO_NORM;
use crate::bm25::Bm25;
use crate::Scorer;

/// A span query's tree over one segment's postings.
pub enum SpanNode {
    Term(Box<dyn Postings>),
    Or(Vec<SpanNode>),
    Near(Vec<SpanNode>),
}

/// A span: its first position and the position after it.
type Span = (u32, u32);

impl SpanNode {
    /// The first document `>= target` where the node may match.
    fn seek(&mut self, target: DocId) -> DocId {
        match self {
            SpanNode::Term(postings) => postings.seek(target),
            SpanNode::Or(parts) => parts.iter_mut().map(|p| p.seek(target)).min().unwrap_or(TERMINATED),
            SpanNode::Near(parts) => {
                let mut target = target;
                'align: loop {
                    for part in parts.iter_mut() {
                        let doc = part.seek(target);
                        if doc == TERMINATED {
                            return TERMINATED;
                        }
                        if doc > target {
                            target = doc;
                            continue 'align;
                        }
                    }
                    return target;
                }
            }
        }
    }

    /// The node's spans in `doc` (which it was sought to) in Lucene's order.
    fn spans(&mut self, doc: DocId, positions: &mut Vec<u32>) -> Vec<Span> {
        match self {
            SpanNode::Term(postings) if postings.doc() == doc => {
                postings.positions(positions);
                positions.iter().map(|&p| (p, p + 1)).collect()
            }
            SpanNode::Term(_) => Vec::new(),
            SpanNode::Or(parts) => {
                let lists: Vec<Vec<Span>> = parts
                    .iter_mut()
                    .filter_map(|p| (p.seek(doc) == doc).then(|| p.spans(doc, positions)))
                    .collect();
                merged(lists)
            }
            SpanNode::Near(parts) => {
                let lists: Vec<Vec<Span>> = parts.iter_mut().map(|p| p.spans(doc, positions)).collect();
                ordered_near(&lists)
            }
        }
    }

    /// The postings under the node, in the query's order.
    fn leaves(&self) -> Vec<&dyn Postings> {
        match self {
            SpanNode::Term(postings) => vec![postings.as_ref()],
            SpanNode::Or(parts) | SpanNode::Near(parts) => parts.iter().flat_map(SpanNode::leaves).collect(),
        }
    }
}

/// The spans of several lists as a queue of their heads gives them: the
/// least start first, then the least end (SpanOrQuery's SpanPositionQueue).
fn merged(lists: Vec<Vec<Span>>) -> Vec<Span> {
    let mut heads = vec![0usize; lists.len()];
    let total = lists.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    while out.len() < total {
        let next =
            (0..lists.len()).filter(|&i| heads[i] < lists[i].len()).min_by_key(|&i| lists[i][heads[i]]);
        let i = next.expect("a list with spans left");
        out.push(lists[i][heads[i]]);
        heads[i] += 1;
    }
    out
}

/// The matches of parts in order, each starting where the one before ended,
/// as NearSpansOrdered finds them with no slop: for each span of the first
/// part, every later part's cursor moves on to the first span starting at or
/// after the end of the part before it (never back); a match when each
/// starts right there. Over when a part has no span left.
fn ordered_near(lists: &[Vec<Span>]) -> Vec<Span> {
    let Some((first, rest)) = lists.split_first() else { return Vec::new() };
    let mut cursors = vec![0usize; rest.len()];
    let mut out = Vec::new();
    for &(start, end) in first {
        let (mut end, mut width) = (end, 0u32);
        for (list, cursor) in rest.iter().zip(cursors.iter_mut()) {
            while *cursor < list.len() && list[*cursor].0 < end {
                *cursor += 1;
            }
            let Some(&(next_start, next_end)) = list.get(*cursor) else { return out };
            width += next_start - end;
            end = next_end;
        }
        if width == 0 {
            out.push((start, end));
        }
    }
    out
}

/// Scores the documents where a span query matches: BM25 of the number of
/// matches (Lucene's SpanScorer adds `1 / (1 + width)` a match, and a match
/// without slop has no width), with the idfs of its distinct terms summed.
pub struct SpanScorer<'a> {
    root: SpanNode,
    bm25: Arc<Bm25>,
    norms: Option<&'a [u8]>,
    doc: DocId,
    freq: f32,
    positions: Vec<u32>,
}

impl<'a> SpanScorer<'a> {
    pub fn new(root: SpanNode, bm25: Arc<Bm25>, norms: Option<&'a [u8]>) -> Self {
        let mut s = SpanScorer { root, bm25, norms, doc: 0, freq: 0.0, positions: Vec::new() };
        s.doc = s.next_match(0);
        s
    }

    pub fn freq(&self) -> f32 {
        self.freq
    }

    fn next_match(&mut self, mut target: DocId) -> DocId {
        loop {
            let doc = self.root.seek(target);
            if doc == TERMINATED {
                return TERMINATED;
            }
            let matches = self.root.spans(doc, &mut self.positions).len();
            if matches > 0 {
                self.freq = matches as f32;
                return doc;
            }
            target = doc + 1;
        }
    }
}

impl DocSet for SpanScorer<'_> {
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
        self.root.leaves().iter().map(|p| p.cost()).sum()
    }
}

impl Scorer for SpanScorer<'_> {
    fn score(&mut self) -> f32 {
        counters::record_memory(DataKind::Norms, usize::from(self.norms.is_some()));
        let norm = self.norms.map_or(NO_NORM, |n| n[self.doc as usize]);
        self.bm25.score(self.freq, norm)
    }

    /// Lucene bounds a span query's scores by nothing; nor does Needle.
    fn max_score(&self) -> f32 {
        f32::INFINITY
    }

    fn block_end(&mut self, _target: DocId) -> DocId {
        TERMINATED
    }

    fn block_max_score(&mut self, _from: DocId, _to: DocId) -> f32 {
        f32::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(positions: &[u32]) -> Vec<Span> {
        positions.iter().map(|&p| (p, p + 1)).collect()
    }

    #[test]
    fn a_near_finds_parts_right_after_one_another() {
        // "a b" in "a a b b": a at 0 fails (b moves on to 2), a at 1 matches.
        assert_eq!(ordered_near(&[terms(&[0, 1]), terms(&[2, 3])]), [(1, 3)]);
        // An or of "b" and "b c" before "d" in "a b c d": the cursor of the or
        // stops at "b" (1..2), d is not right after it, and the walk is over.
        let or = merged(vec![terms(&[1]), vec![(1, 3)]]);
        assert_eq!(or, [(1, 2), (1, 3)]);
        assert!(ordered_near(&[terms(&[0]), or.clone(), terms(&[3])]).is_empty());
        // With the longer span first in the walk it matches.
        assert_eq!(ordered_near(&[or, terms(&[3])]), [(1, 4)]);
    }

    #[test]
    fn an_or_keeps_every_span_merged_by_start_then_end() {
        let lists = vec![vec![(0, 2), (4, 5)], terms(&[0, 4]), vec![(3, 6)]];
        assert_eq!(merged(lists), [(0, 1), (0, 2), (3, 6), (4, 5), (4, 5)]);
    }
}
