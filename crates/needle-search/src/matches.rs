//! Every matching document, in index order, unpruned, scored only when
//! asked: what aggregations walk, a batch of matches at a time.

use needle_codecs::SegmentRead;
use needle_core::{deadline, read_error, Deletes, DocId, Result, TERMINATED};

use crate::stats::{CorpusStats, IndexStats};
use crate::weight::scorer;
use crate::Query;

/// Matches handed over at once: enough that reading a field's values for
/// them pays per block of values, not per document.
pub const MATCH_BATCH: usize = 1024;

/// What is handed each batch: (segment number, segment, documents, scores).
pub type MatchVisitor<'a> = dyn FnMut(usize, &dyn SegmentRead, &[DocId], &[f32]) + 'a;

/// Calls `visit(segment number, segment, docs, scores)` with every live
/// document `query` matches, up to [`MATCH_BATCH`] at a time, ascending and
/// of one segment per call (the scores NaN unless `scores`); returns how many
/// there were.
pub(crate) fn for_each_match(
    segments: &[&dyn SegmentRead],
    deletes: &[Option<&dyn Deletes>],
    corpus: Option<&CorpusStats>,
    query: &Query,
    scores: bool,
    visit: &mut MatchVisitor<'_>,
) -> Result<u64> {
    let mut stats = IndexStats::collect(segments, query, true, corpus)?;
    let mut total = 0;
    let (mut docs, mut scored) = (Vec::with_capacity(MATCH_BATCH), Vec::with_capacity(MATCH_BATCH));
    for (seg, &segment) in segments.iter().enumerate() {
        if let Some(mut s) = scorer(query, &mut stats, seg, segment, 1.0)? {
            while s.doc() != TERMINATED && !deadline::passed() {
                docs.clear();
                scored.clear();
                if scores {
                    while s.doc() != TERMINATED && docs.len() < MATCH_BATCH {
                        docs.push(s.doc());
                        scored.push(s.score());
                        s.advance();
                    }
                } else {
                    s.fill_docs(&mut docs, MATCH_BATCH);
                    scored.resize(docs.len(), f32::NAN);
                }
                if let Some(deletes) = deletes[seg] {
                    let mut kept = 0;
                    for i in 0..docs.len() {
                        if !deletes.is_deleted(docs[i]) {
                            (docs[kept], scored[kept]) = (docs[i], scored[i]);
                            kept += 1;
                        }
                    }
                    docs.truncate(kept);
                    scored.truncate(kept);
                }
                if !docs.is_empty() {
                    visit(seg, segment, &docs, &scored);
                    total += docs.len() as u64;
                }
            }
        }
        read_error::check()?;
    }
    Ok(total)
}
