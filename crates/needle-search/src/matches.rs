//! Every matching document, in index order, unscored and unpruned: what
//! aggregations walk.

use needle_codecs::SegmentRead;
use needle_core::{read_error, Deletes, DocId, Result, TERMINATED};

use crate::stats::IndexStats;
use crate::weight::scorer;
use crate::Query;

/// Calls `visit(segment number, segment, doc)` for every live document
/// `query` matches; returns how many there were.
pub(crate) fn for_each_match(
    segments: &[&dyn SegmentRead],
    deletes: &[Option<&dyn Deletes>],
    query: &Query,
    visit: &mut dyn FnMut(usize, &dyn SegmentRead, DocId),
) -> Result<u64> {
    let mut stats = IndexStats::collect(segments, query, true)?;
    let mut total = 0;
    for (seg, &segment) in segments.iter().enumerate() {
        if let Some(mut s) = scorer(query, &mut stats, seg, segment, 1.0)? {
            let mut doc = s.doc();
            while doc != TERMINATED {
                if !deletes[seg].is_some_and(|d| d.is_deleted(doc)) {
                    total += 1;
                    visit(seg, segment, doc);
                }
                doc = s.advance();
            }
        }
        read_error::check()?;
    }
    Ok(total)
}
