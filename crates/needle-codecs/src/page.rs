//! The 4 KiB page: the unit of a device read, which records and documents are laid out around.

use std::collections::VecDeque;
use std::ops::Range;

use needle_core::Result;

use crate::checksummed::ChecksummedWriter;
use crate::meta::FileStamp;

pub const PAGE: u64 = 4096;

/// How far behind the end of what is placed a gap is still filled: beyond
/// it the gap stays padding and what precedes the next gap is written. (A
/// run of long documents leaves gaps that only later short ones fill: 256
/// KB left 0.56 MB of the shared corpus's documents as padding, 4 MB 0.25 MB.)
const FILL_WINDOW: u64 = 4 << 20;

/// A gap left smaller than this stays padding: few records are that small.
const MIN_GAP: u64 = 8;

/// The most gaps open at once (the oldest closes first). A record is offered
/// to them oldest first; one larger than every gap passes at once.
const MAX_GAPS: usize = 1024;

/// Where a record of `len` bytes should start if the next free byte is `at`:
/// `at`, or the next page boundary when starting there spans fewer pages
/// (so `len` bytes of at most one page never straddle two).
pub fn aligned_start(at: u64, len: u64) -> u64 {
    if len == 0 {
        return at;
    }
    let pages_here = (at + len - 1) / PAGE - at / PAGE + 1;
    if len.div_ceil(PAGE) < pages_here {
        at.next_multiple_of(PAGE)
    } else {
        at
    }
}

/// Writes records of a file body each at the place [`aligned_start`] gives
/// it, except that the padding left before a record moved to a page boundary
/// is filled with later records small enough to fit in it whole (a gap
/// lies within one page, so they straddle none either). Readers find each
/// record through an index (a term map, a document index), so the order
/// does not matter to them. On the shared corpus, padding was 7% of the
/// index (3.7 MB of postings, 3.7 MB of documents).
pub struct PackedWriter {
    out: ChecksummedWriter,
    /// Placed bytes from file offset `base` on; those from `out`'s position
    /// on are not written while a gap among them may still be filled (the
    /// written prefix is dropped now and then, not at every write).
    pending: Vec<u8>,
    base: u64,
    /// The open gaps (file offsets, zeros in `pending`), oldest first.
    gaps: VecDeque<Range<u64>>,
    /// At least the size of the largest open gap.
    largest_gap: u64,
    /// [`FILL_WINDOW`], smaller in tests.
    window: u64,
}

impl PackedWriter {
    pub fn new(out: ChecksummedWriter) -> Self {
        Self::with_window(out, FILL_WINDOW)
    }

    fn with_window(out: ChecksummedWriter, window: u64) -> Self {
        let base = out.position();
        PackedWriter { out, pending: Vec::new(), base, gaps: VecDeque::new(), largest_gap: 0, window }
    }

    /// The end of what is placed: where the next record would go after padding.
    pub fn position(&self) -> u64 {
        self.base + self.pending.len() as u64
    }

    /// Places `record`, whose first `kept` bytes are what a reader reads of
    /// it at once (see [`aligned_start`]), and returns its offset.
    pub fn place(&mut self, record: &[u8], kept: u64) -> Result<u64> {
        let len = record.len() as u64;
        if let Some(at) = self.fill(record) {
            return Ok(at);
        }
        let end = self.position();
        let at = aligned_start(end, kept.min(len));
        if at > end {
            self.gaps.push_back(end..at);
            self.largest_gap = self.largest_gap.max(at - end);
        }
        self.pending.resize((at - self.base) as usize, 0);
        self.pending.extend_from_slice(record);
        self.close_old_gaps();
        self.write_settled()?;
        Ok(at)
    }

    /// Writes what is pending (the open gaps stay padding), then the footer.
    pub fn finish(self, kind: &[u8; 4], version: u32) -> Result<FileStamp> {
        self.into_inner()?.finish(kind, version)
    }

    /// Writes what is pending (the open gaps stay padding) and returns the
    /// file, for what follows the records.
    pub fn into_inner(mut self) -> Result<ChecksummedWriter> {
        self.gaps.clear();
        self.write_settled()?;
        Ok(self.out)
    }

    /// Puts `record` in the oldest gap that holds it; its offset, or `None`.
    fn fill(&mut self, record: &[u8]) -> Option<u64> {
        let len = record.len() as u64;
        if len > self.largest_gap {
            return None;
        }
        let Some(i) = self.gaps.iter().position(|g| g.end - g.start >= len) else {
            // Most records fit no gap: the next ones that do not fit this are passed at once.
            self.largest_gap = self.gaps.iter().map(|g| g.end - g.start).max().unwrap_or(0);
            return None;
        };
        let at = self.gaps[i].start;
        let from = (at - self.base) as usize;
        self.pending[from..from + record.len()].copy_from_slice(record);
        self.gaps[i].start += len;
        if self.gaps[i].end - self.gaps[i].start < MIN_GAP {
            self.gaps.remove(i);
        }
        Some(at)
    }

    fn close_old_gaps(&mut self) {
        let end = self.position();
        while self.gaps.len() > MAX_GAPS || self.gaps.front().is_some_and(|g| end - g.start > self.window) {
            self.gaps.pop_front();
        }
    }

    /// Writes the pending bytes before the oldest open gap.
    fn write_settled(&mut self) -> Result<()> {
        let settled = self.gaps.front().map_or(self.position(), |g| g.start);
        let (from, to) = ((self.out.position() - self.base) as usize, (settled - self.base) as usize);
        if to > from {
            self.out.write(&self.pending[from..to])?;
        }
        if to > self.pending.len() / 2 {
            self.pending.drain(..to);
            self.base = settled;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use needle_storage::Directory;
    use proptest::prelude::*;

    use super::{aligned_start, PackedWriter, FILL_WINDOW, PAGE};
    use crate::checksummed::ChecksummedWriter;

    /// Places records of `lens` (the first `kept` of each what a reader
    /// reads at once), returning the file body and each record's offset.
    fn pack(records: &[(Vec<u8>, u64)], window: u64) -> (Vec<u8>, Vec<u64>) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let mut w = PackedWriter::with_window(ChecksummedWriter::new(dir.create("f").unwrap()), window);
        let at: Vec<u64> = records.iter().map(|(r, kept)| w.place(r, *kept).unwrap()).collect();
        let stamp = w.finish(b"TEST", 1).unwrap();
        let body = std::fs::read(tmp.path().join("f")).unwrap();
        assert_eq!(body.len() as u64, stamp.len);
        (body[..body.len() - crate::footer::FOOTER_LEN].to_vec(), at)
    }

    proptest! {
        #[test]
        fn records_land_whole_apart_and_as_aligned(
            specs in prop::collection::vec((1usize..6000, 0u64..7000, any::<u8>()), 1..300),
            window in 0u64..100_000,
        ) {
            let records: Vec<(Vec<u8>, u64)> = specs
                .iter()
                .map(|&(len, kept, fill)| ((0..len).map(|i| fill.wrapping_add(i as u8) | 1).collect(), kept))
                .collect();
            let (body, at) = pack(&records, window);
            let mut spans: Vec<(u64, u64)> = Vec::new();
            for ((r, kept), &a) in records.iter().zip(&at) {
                let end = a + r.len() as u64;
                prop_assert_eq!(&body[a as usize..end as usize], &r[..]);
                let kept = (*kept).min(r.len() as u64).max(1);
                prop_assert_eq!(aligned_start(a, kept), a, "a record is where alignment would leave it");
                spans.push((a, end));
            }
            spans.sort_unstable();
            prop_assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "records overlap");
            // Every byte of the body is a record's or padding (zeros; no record byte is 0).
            let used: u64 = spans.iter().map(|s| s.1 - s.0).sum();
            prop_assert_eq!(used as usize, body.iter().filter(|&&b| b != 0).count());
        }
    }

    #[test]
    fn later_small_records_fill_the_padding() {
        let big = vec![7u8; 3000];
        let small = vec![9u8; 100];
        let (body, at) =
            pack(&[(vec![5u8; 2000], 2000), (big, 3000), (small.clone(), 100), (small, 100)], FILL_WINDOW);
        assert_eq!(at, vec![0, PAGE, 2000, 2100]);
        assert_eq!(body.len() as u64, PAGE + 3000);
    }

    #[test]
    fn aligns_only_when_it_saves_a_page() {
        assert_eq!(aligned_start(2048, 3000), 4096);
        assert_eq!(aligned_start(2048, 1000), 2048);
        assert_eq!(aligned_start(100, 4096), 4096);
        assert_eq!(aligned_start(4096, 5000), 4096);
        assert_eq!(aligned_start(5000, 9000), 5000, "spans three pages either way");
    }
}
