//! Grouped postings: everything a query needs for one term in one contiguous
//! record, in the order a query reads it (WiSER's cross-stage grouping).
//!
//! ```text
//! PostingsFile := (Padding? Record)^TermCount  Footer(kind "POST", version 8)
//! Record       := Header SkipIndex? Skip^NumBlocks DocFreqBlock^NumBlocks BloomGroup^NumBlocks
//!                 PosBlock^NumBlocks OffBlock^NumBlocks
//!               | LoneRecord | BlockRecord
//! LoneRecord   := Flags:u8 DocFreqBits:vint Filter^(0..2) PosBlock? OffBlock?
//! BlockRecord  := Flags:u8 DocFreq:vint ExtraFreq:vint [PosBytes:vint] [OffBytes:vint] [BloomBytes:vint]
//!                 Skip DocFreqBlock BloomGroup? PosBlock? OffBlock?
//! Header       := Flags:u8 DocFreq:vint ExtraFreq:vint SkipBytes:vint [DocBytes:vint] PosBytes:vint OffBytes:vint
//!                 [BloomBytes:vint Shape [MinFreq:vint]] [SkipIndexBytes:vint]
//! Shape        := 0:vint | MaxInsertions:vint FpMillionths:vint
//! Skip         := LastDocDelta:vint [DocBlockBytes:vint [PosBlockBytes:vint] [OffBlockBytes:vint]
//!                 [BloomGroupBytes:vint]] ImpactCount:vint (FreqDelta:vint Norm:u8)^ImpactCount
//! SkipIndex    := PageEntry^ceil(NumBlocks / 32)
//! PageEntry    := LastDocDelta:vint SkipBytes:vint DocBytes:vint [PosBytes:vint] [OffBytes:vint]
//!                 [BloomBytes:vint] MaxFreq:vint MinNorm:u8
//! DocFreqBlock := Block(DocGap^n) Block((Freq-1)^n)                  n = 128, or the tail (< 128)
//! PosBlock     := Stream(PosDelta^(sum of the block's freqs))
//! OffBlock     := Stream(StartDelta^n) (CommonLength:vint | 0:vint Stream(Length^n))
//!                                                              n = the sum of the block's freqs
//! ```
//!
//! - `Flags`: bit 0 = positions stored, bit 1 = offsets stored, bit 2 = Bloom
//!   filters stored, bit 3 = skip index stored, bit 4 = filters right after
//!   the doc blocks (the bracketed parts are present only with their flag; a
//!   list has a skip index exactly when it has more than 32 blocks).
//!   `BloomGroup` holds the two filters of each posting of the block, as
//!   [`crate::bloom`] specifies. A phrase reads a block's filters after its
//!   doc ids and instead of its positions when a test is negative, so they
//!   share pages with the doc ids (version 3 writes bit 4 with bit 2).
//!   Older files are read as they are: version 2 records put the filters last
//!   (`... PosBlock* OffBlock* BloomGroup*`, bit 4 clear), version 1 records
//!   are version 2 without skip indexes.
//!   Bit 5: offsets bit-packed, as positions are (version 4 writes it with
//!   bit 1); without it, a version 3 record's `OffBlock` is
//!   `(StartDelta:vint Length:vint)^(sum of the block's freqs)`.
//!   Bit 6: `MinFreq` follows the filter shape (version 5 writes it when
//!   above 1, for lists longer than a block: see [`crate::bloom`]): only
//!   postings of that frequency or more have filters, and a record has
//!   filters (bit 2) only when one of its postings does; a group of a block
//!   without such postings is empty (no bitmaps).
//!   Bit 7: the record is one block (version 6 writes it whenever
//!   `DocFreq` <= 128). Its skip entry has no block sizes (the bracketed
//!   run after `LastDocDelta`): they are the header's. A record of one
//!   document (bit 7 and `DocFreq` 1) also has no `DocFreqBlock` and no
//!   `DocBytes`: its doc is the entry's last doc and its frequency
//!   `ExtraFreq + 1`; its skip entry is `LastDocDelta:vint Norm:u8`, its one
//!   impact being (that frequency, `Norm`). Most terms occur in one
//!   document, and these bytes repeated what the header says.
//! - `LoneRecord` (version 8: flags with bits 3 and 7, which no `Header`
//!   has together): a record of one document of frequency `freq` at most 8,
//!   whose filters if any are WiSER's shape. It is the one-document record
//!   above without what its bytes give: `DocFreqBits` = doc * 8 + freq - 1
//!   is its skip entry (a doc below 262,144 and its frequency in 3 bytes,
//!   where doc and frequency took 4); it keeps no norm, its impact being
//!   (freq, norm byte 0), which bounds any length (the search scores a list
//!   of one document exactly for its bound); bits 4 and 6 say whether its
//!   before and after filters are there, each `shape.bytes(freq)` bytes (in
//!   place of the group's bitmaps); the positions are `freq` vints, the
//!   offsets `freq` vints and a common length or 0 and `freq` more. Of the
//!   shared corpus's 655k terms, 488k are such records, 9 bytes smaller
//!   each. A reader parses all of it to open it: one read of its page, two
//!   for the few (its size in 4,096) that cross a page. Bit 5 is clear.
//! - `BlockRecord` (version 8: bits 3, 5 and 7): a record of 2 to 128
//!   documents (one block) whose filters if any are WiSER's shape for every
//!   frequency: the one-block record above without `SkipBytes`, `DocBytes`
//!   and `Shape`, which its skip entry and doc block give as they are
//!   parsed; bits 4 and 6 are clear (offsets are packed, filters first);
//!   the sizes of positions, offsets and filters are there when they are.
//!   160k of the shared corpus's terms, 3 bytes smaller each.
//! - `Shape` 0 is WiSER's (`MaxInsertions` 5, `FpMillionths` 900, the
//!   default: see [`crate::bloom`]); version 6 writes it so, older versions
//!   wrote both numbers.
//!   `ExtraFreq` = total term frequency - doc frequency. `NumBlocks` = ceil(DocFreq / 128).
//! - The prefetch zone is `Header Skip* DocFreqBlock*`: what a query that does
//!   not need positions reads. Its size goes in the term map entry.
//! - `LastDocDelta`: the block's last doc id minus the previous block's (the
//!   first block's is its last doc id). `DocGap` = doc - previous doc - 1, the
//!   previous doc of the first block being -1. Blocks use [`crate::bitpack`];
//!   version 7 writes a full block whose few wide values would widen it
//!   (a frequency of 40 among ones) patched, as that module says.
//! - Impacts: the block's competitive (frequency, norm byte) pairs, those no
//!   other document of the block beats on both counts (as Lucene's impacts),
//!   ascending by frequency (and so by norm), frequencies delta-coded. BM25
//!   grows with frequency and shrinks with length, so the best score of the
//!   block is the best score of these pairs, for any collection statistics:
//!   the bound block-max pruning needs (a stored float would go stale as segments
//!   are added).
//! - Skip index: one entry per page of 32 skip entries (the last page may
//!   be shorter): the page's last doc id minus the previous page's (the first
//!   page's is its last doc id), the bytes of its skip entries and of each of
//!   its blocks' sections, and the bound of its blocks (the largest frequency,
//!   the smallest norm byte). A reader reads the index at open and a page of
//!   entries when a query reaches it (see `skips`).
//! - `PosDelta`: per document, its first position, then each position minus the previous one.
//!   `StartDelta`: the start offset minus the previous token's start in the
//!   same document (0 for the first); `Length` = end - start. `CommonLength`
//!   = the length every offset of the block has, plus 1 (a term's tokens
//!   mostly have one length); 0 when they differ, the lengths following.
//! - What a search reads of a record (all but its offsets, which come last
//!   and only highlighting reads) never straddles a 4 KiB boundary when it
//!   fits a page: the writer pads to the next page when it would cross one,
//!   so a rare term costs one read. (Version 5 and older files pad so for
//!   the whole record.) Records need not follow their terms' order: the
//!   writer fills padding with later records that fit in it whole
//!   ([`crate::page::PackedWriter`]; version 8 writes so, readers of any
//!   version find records through the term map).
//!
//! Worked example: doc ids 3, 7, 8 with freqs 1, 2, 1 (one tail block) give
//! `DocGap` = 3, 3, 0 and `Freq-1` = 0, 1, 0; the skip entry says last doc 8
//! (and no block sizes: the record is one block) and, if doc 7 is the
//! longest, impacts (1, norm of 3 or 8) and (2, norm of 7).

mod reader;
mod skips;
mod writer;

pub use reader::{lone_doc, read_header, DiskPostings, RecordHeader};
pub use skips::PAGE_BLOCKS;
pub use writer::{write_record, write_record_with, RecordScratch, RecordSizes};

use needle_core::{DocId, DocSet};

use crate::bloom::FilterShape;
pub use crate::bloom::Side;

pub const KIND: &[u8; 4] = b"POST";
pub const VERSION: u32 = 8;

pub(crate) const FLAG_POSITIONS: u8 = 1;
pub(crate) const FLAG_OFFSETS: u8 = 2;
pub(crate) const FLAG_BLOOM: u8 = 4;
pub(crate) const FLAG_SKIP_INDEX: u8 = 8;
pub(crate) const FLAG_FILTERS_FIRST: u8 = 16;
pub(crate) const FLAG_PACKED_OFFSETS: u8 = 32;
pub(crate) const FLAG_MIN_FREQ: u8 = 64;
pub(crate) const FLAG_ONE_BLOCK: u8 = 128;
/// A compact record of one block (format 8): bits 3 and 7, which no other record has together.
pub(crate) const COMPACT: u8 = FLAG_ONE_BLOCK | FLAG_SKIP_INDEX;
/// In a compact record's flags, in place of bit 5 (its offsets, if any, are
/// packed): it holds more than one document.
pub(crate) const COMPACT_BLOCK: u8 = FLAG_PACKED_OFFSETS;
/// In a compact one-document record's flags, in place of bits 4 and 6 (its
/// filters are first, of one frequency): its before and after filters are stored.
pub(crate) const LONE_BEFORE: u8 = FLAG_FILTERS_FIRST;
pub(crate) const LONE_AFTER: u8 = FLAG_MIN_FREQ;
/// A compact one-document record's entry: its doc, shifted by these bits
/// that hold its frequency less 1 (at most [`LONE_MAX_FREQ`]).
pub(crate) const LONE_FREQ_BITS: u32 = 3;
pub(crate) const LONE_MAX_FREQ: u32 = 1 << LONE_FREQ_BITS;

/// The two Bloom filters of every posting of a term, as the writer takes them:
/// for each side, every posting's filter of `shape.bytes(freq)` bytes, one
/// after another in posting order; all-zero for an empty filter.
#[derive(Debug, Clone, Copy)]
pub struct BloomPostings<'a> {
    pub shape: FilterShape,
    pub before: &'a [u8],
    pub after: &'a [u8],
    /// The filters the record keeps: `shape`, or it from a higher `min_freq`
    /// (see `BloomParams::record_shape`).
    pub kept: FilterShape,
}

/// One term's postings, as the writer takes them.
#[derive(Debug, Clone, Copy)]
pub struct TermPostings<'a> {
    pub docs: &'a [DocId],
    pub freqs: &'a [u32],
    /// Every document's positions, concatenated (`freqs[i]` of them for doc `i`).
    pub positions: &'a [u32],
    /// Start and end byte offsets, parallel to `positions`.
    pub offsets: &'a [(u32, u32)],
    pub bloom: Option<BloomPostings<'a>>,
}

/// What a query may read of a posting beyond its doc id and frequency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Positions,
    Filters,
}

/// An upper bound on the BM25 contribution of some postings: no document in
/// them has a higher frequency or a lower norm byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockImpact {
    pub max_freq: u32,
    pub min_norm: u8,
}

impl BlockImpact {
    pub const NONE: BlockImpact = BlockImpact { max_freq: 0, min_norm: u8::MAX };

    pub fn merge(self, other: BlockImpact) -> BlockImpact {
        BlockImpact {
            max_freq: self.max_freq.max(other.max_freq),
            min_norm: self.min_norm.min(other.min_norm),
        }
    }
}

/// A term's posting list, positioned on a document (see [`DocSet`]).
pub trait Postings: DocSet + Send {
    fn doc_freq(&self) -> u32;

    /// Occurrences of the term in the current document.
    fn freq(&self) -> u32;

    /// The current document's positions, ascending (empty when not stored).
    fn positions(&mut self, out: &mut Vec<u32>);

    /// The current document's byte offsets, parallel to `positions`.
    fn offsets(&mut self, out: &mut Vec<(u32, u32)>);

    /// The last document of the block holding the first document `>= target`
    /// (`TERMINATED` past the end), without moving the iterator.
    fn block_end(&mut self, target: DocId) -> DocId;

    /// A bound over the blocks that hold documents in `from..=to`.
    fn impact(&mut self, from: DocId, to: DocId) -> BlockImpact;

    /// A bound over the whole list.
    fn max_impact(&self) -> BlockImpact;

    /// The competitive (frequency, norm) pairs of the blocks that hold
    /// documents in `from..=to`, appended to `out`: a tighter bound than
    /// [`impact`](Self::impact), one score per pair. By default that one pair.
    fn impacts(&mut self, from: DocId, to: DocId, out: &mut Vec<(u32, u8)>) {
        let i = self.impact(from, to);
        if i.max_freq > 0 {
            out.push((i.max_freq, i.min_norm));
        }
    }

    /// Occurrences of the term in all documents.
    fn total_term_freq(&self) -> u64;

    /// Records, for whoever drives the walk (see `needle_core::read_error`),
    /// that the current document contradicts the list's recorded impacts (it
    /// scores above their bound): damaged bytes that a block's own checks
    /// cannot see. The list does not move.
    fn record_damage(&self, what: String) {
        needle_core::read_error::record(needle_core::Error::corrupt("postings", what));
    }

    /// The documents after the current one in its block, ascending: what a
    /// scorer may look up ahead of moving there (none by default).
    fn block_ahead(&self) -> &[DocId] {
        &[]
    }

    /// The current document and the rest of its block, with their
    /// frequencies: what a scorer may score in one pass, then move past with
    /// [`advance_by`](Self::advance_by). Empty (the default) for a list not
    /// held in blocks, which is then scored a document at a time; empty too
    /// once the list has ended.
    fn block_rest(&self) -> (&[DocId], &[u32]) {
        (&[], &[])
    }

    /// Moves `n` documents on, at most past the end of the current block
    /// (`n <= block_rest().0.len()`); returns the document it is then on.
    fn advance_by(&mut self, n: usize) -> DocId {
        for _ in 0..n {
            self.advance();
        }
        self.doc()
    }

    /// Storage pages that reading the current document's `part` would add to
    /// those this list has read: 0 once the block's part is in memory or lies
    /// on pages already read. What the phrase cost model weighs; lists held
    /// in memory cost nothing.
    fn read_cost(&self, _part: Part) -> u32 {
        0
    }

    /// Bytes of the current block's `part` (its positions, or its filter
    /// group) in storage; 0 for lists held in memory.
    fn block_bytes(&self, _part: Part) -> usize {
        0
    }

    /// Whether the current document's `side` filter may hold the term with
    /// `hash` (`false`: certainly not); `None` when the list has no filters.
    fn bloom_test(&mut self, side: Side, hash: u64) -> Option<bool>;

    /// Appends the current document's two filters, each of
    /// `shape.bytes(freq)` bytes (zeros when empty); `None` (and nothing
    /// appended) when the list has no filters, else their shape.
    fn filters_into(&mut self, before: &mut Vec<u8>, after: &mut Vec<u8>) -> Option<FilterShape>;
}
