//! One term's postings laid out as the segment writer takes them
//! ([`TermPostings`]): what a flush gathers from in-memory chunks and a merge
//! from its inputs, in buffers kept from one term to the next.

use needle_codecs::bloom::FilterShape;
use needle_codecs::postings::BloomPostings;
use needle_codecs::TermPostings;
use needle_core::DocId;

#[derive(Default)]
pub(crate) struct FlatPostings {
    pub docs: Vec<DocId>,
    pub freqs: Vec<u32>,
    pub positions: Vec<u32>,
    pub offsets: Vec<(u32, u32)>,
    /// Each posting's filters, packed (see [`BloomPostings`]).
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

impl FlatPostings {
    pub fn clear(&mut self) {
        self.docs.clear();
        self.freqs.clear();
        self.positions.clear();
        self.offsets.clear();
        self.before.clear();
        self.after.clear();
    }

    /// The postings for the writer, with their filters when they have this shape.
    pub fn as_postings(&self, bloom: Option<FilterShape>) -> TermPostings<'_> {
        TermPostings {
            docs: &self.docs,
            freqs: &self.freqs,
            positions: &self.positions,
            offsets: &self.offsets,
            bloom: bloom.map(|shape| BloomPostings {
                shape,
                before: &self.before,
                after: &self.after,
                kept: shape,
            }),
        }
    }
}
