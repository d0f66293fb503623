//! Every matching document, in index order, unpruned, scored only when
//! asked: what aggregations walk.

use needle_codecs::SegmentRead;
use needle_core::{read_error, Deletes, DocId, Result, TERMINATED};

use crate::stats::IndexStats;
use crate::weight::scorer;
use crate::Query;

/// Calls `visit(segment number, segment, doc, score)` for every live
/// document `query` matches (the score NaN unless `scores`); returns how
/// many there were.
pub(crate) fn for_each_match(
    segments: &[&dyn SegmentRead],
    deletes: &[Option<&dyn Deletes>],
    query: &Query,
    scores: bool,
    visit: &mut dyn FnMut(usize, &dyn SegmentRead, DocId, f32),
) -> Result<u64> {
    let mut stats = IndexStats::collect(segments, query, true)?;
    let mut total = 0;
    for (seg, &segment) in segments.iter().enumerate() {
        if let Some(mut s) = scorer(query, &mut stats, seg, segment, 1.0)? {
            let mut doc = s.doc();
            while doc != TERMINATED {
                if !deletes[seg].is_some_and(|d| d.is_deleted(doc)) {
                    total += 1;
                    visit(seg, segment, doc, if scores { s.score() } else { f32::NAN });
                }
                doc = s.advance();
            }
        }
        read_error::check()?;
    }
    Ok(total)
}
