//! A record's skip list, read a page at a time (format: see the module above).
//!
//! A list of more than [`PAGE_BLOCKS`] blocks carries a skip index: one entry
//! per page of 32 skip entries, with the page's last document, the bytes of
//! each of its sections and the bound of its blocks. Opening the list reads
//! the index only; a page's entries are read and decoded when a query first
//! reaches a block in it, and a range that covers whole pages is bounded
//! from the index without reading them. A conjunction or phrase that seeks a
//! frequent term to a few documents so reads a few pages of its skip list,
//! not all of it (a 3M-posting term has 24k entries).

use std::ops::Range;

use needle_core::{DocId, Error, Result, TERMINATED};
use needle_storage::counters::{self, DataKind};
use needle_storage::FileSlice;

use super::{BlockImpact, FLAG_BLOOM, FLAG_OFFSETS, FLAG_ONE_BLOCK, FLAG_POSITIONS, LONE_FREQ_BITS};
use crate::bytes::ByteReader;

/// Skip entries per page of a list that has a skip index.
pub const PAGE_BLOCKS: usize = 32;

/// Where a block's data is, and what bounds its scores.
#[derive(Debug, Clone, Copy)]
pub(super) struct Skip {
    /// The last doc id of the previous block (-1 for the first block).
    pub prev_last_doc: i64,
    pub last_doc: DocId,
    pub doc_start: usize,
    pub pos_start: usize,
    pub off_start: usize,
    pub bloom_start: usize,
    /// Where the block's docs, positions, offsets and filters end.
    pub doc_end: usize,
    pub pos_end: usize,
    pub off_end: usize,
    pub bloom_end: usize,
    pub impact: BlockImpact,
    /// This block's competitive pairs in its page's `impacts`.
    pub impacts: (u32, u32),
}

/// Which sections the record stores: the optional fields of a skip entry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sections {
    pub flags: u8,
    /// A one-document record's frequency: its skip entry's one impact is
    /// this frequency and the norm byte the entry holds.
    pub lone_freq: Option<u32>,
    /// A compact one-document record (format 8): its entry's doc shares a
    /// vint with its frequency, and it keeps no norm; and whether its before
    /// and after filters are there, as its flags say in place of bitmaps.
    pub compact: Option<[bool; 2]>,
}

impl Sections {
    /// Which of (docs, positions, offsets, filters) the record stores.
    fn present(self) -> [bool; 4] {
        [true, self.flags & FLAG_POSITIONS != 0, self.flags & FLAG_OFFSETS != 0, self.flags & FLAG_BLOOM != 0]
    }

    /// Whether a skip entry leaves its block's sizes out (they are the record's).
    fn sizes_implied(self) -> bool {
        self.flags & FLAG_ONE_BLOCK != 0
    }
}

/// The skip list's place in the record, from the header.
pub(super) struct SkipLayout {
    pub sections: Sections,
    pub blocks: usize,
    /// The skip index's bytes (empty when the list has none).
    pub index: Range<usize>,
    /// The skip entries' bytes.
    pub entries: Range<usize>,
    /// Where the docs, positions, offsets and filters sections start, and their lengths.
    pub starts: [usize; 4],
    pub lens: [usize; 4],
}

struct Decoded {
    skips: Vec<Skip>,
    impacts: Vec<(u32, u8)>,
}

struct Page {
    first_block: usize,
    blocks: usize,
    prev_last_doc: i64,
    last_doc: DocId,
    bytes: Range<usize>,
    starts: [usize; 4],
    lens: [usize; 4],
    bound: BlockImpact,
    decoded: Option<Decoded>,
}

/// A record's skip list; pages are decoded on first use and kept.
pub(super) struct SkipList {
    data: FileSlice,
    sections: Sections,
    /// Blocks per page: [`PAGE_BLOCKS`], or all of them for a list without an index.
    page_blocks: usize,
    blocks: usize,
    pages: Vec<Page>,
    max_impact: BlockImpact,
}

impl SkipList {
    /// Reads the skip index (or, for a list without one, its whole skip list) and checks it.
    pub fn open(data: &FileSlice, layout: SkipLayout) -> Result<SkipList> {
        let mut list = SkipList {
            data: data.clone(),
            sections: layout.sections,
            page_blocks: layout.blocks.max(1),
            blocks: layout.blocks,
            pages: Vec::new(),
            max_impact: BlockImpact::NONE,
        };
        if layout.index.is_empty() {
            let page = Page {
                first_block: 0,
                blocks: layout.blocks,
                prev_last_doc: -1,
                last_doc: TERMINATED,
                bytes: layout.entries.clone(),
                starts: layout.starts,
                lens: layout.lens,
                bound: BlockImpact::NONE,
                decoded: None,
            };
            let decoded = list.decode(&page)?;
            let last = decoded.skips.last().map_or(TERMINATED, |s| s.last_doc);
            let bound = decoded.skips.iter().fold(BlockImpact::NONE, |acc, s| acc.merge(s.impact));
            list.pages.push(Page { last_doc: last, bound, decoded: Some(decoded), ..page });
        } else {
            list.page_blocks = PAGE_BLOCKS;
            list.pages = read_index(data, &layout)?;
        }
        list.max_impact = list.pages.iter().fold(BlockImpact::NONE, |acc, p| acc.merge(p.bound));
        Ok(list)
    }

    pub fn blocks(&self) -> usize {
        self.blocks
    }

    pub fn max_impact(&self) -> BlockImpact {
        self.max_impact
    }

    /// Block `b`'s entry, reading its page if needed.
    pub fn get(&mut self, b: usize) -> Result<Skip> {
        let p = b / self.page_blocks;
        let first = self.pages[p].first_block;
        Ok(self.page(p)?.skips[b - first])
    }

    /// What a reader going through the list in order, at block `b`, should
    /// ask for next from byte `start` of the docs (block `b`'s start, or
    /// further on, where what was asked before ends): the docs within
    /// `window` bytes, and the skip entries of their pages not read yet,
    /// appended to `out`. Returns where the docs asked for end.
    pub fn ahead(&self, b: usize, start: usize, window: usize, out: &mut Vec<Range<usize>>) -> usize {
        let limit = start.saturating_add(window);
        let mut end = start;
        for page in &self.pages[b / self.page_blocks..] {
            let docs_end = page.starts[0] + page.lens[0];
            if docs_end <= start {
                continue; // asked for with the docs before `start`
            }
            if page.decoded.is_none() {
                out.push(page.bytes.clone());
            }
            end = docs_end.min(limit);
            if docs_end >= limit {
                break;
            }
        }
        out.push(start..end);
        end
    }

    /// The first block at or after `from` whose last doc is `>= target`.
    pub fn block_for(&mut self, from: usize, target: DocId) -> Result<Option<usize>> {
        if from >= self.blocks {
            return Ok(None);
        }
        let p0 = from / self.page_blocks;
        let p = p0 + self.pages[p0..].partition_point(|pg| pg.last_doc < target);
        if p == self.pages.len() {
            return Ok(None);
        }
        let first = self.pages[p].first_block;
        let skips = &self.page(p)?.skips;
        let start = from.saturating_sub(first);
        Ok(Some(first + start + skips[start..].partition_point(|s| s.last_doc < target)))
    }

    /// Calls `visit` with the bound of each block holding documents in
    /// `from..=to`, or of a whole page when the range covers a page not yet
    /// read (with that page's impacts for `pairs`).
    fn each_bound(
        &mut self,
        from: usize,
        from_doc: DocId,
        to: DocId,
        mut visit: impl FnMut(BlockImpact, &[(u32, u8)]),
    ) -> Result<()> {
        let Some(mut b) = self.block_for(from, from_doc)? else { return Ok(()) };
        while b < self.blocks {
            let p = b / self.page_blocks;
            let page = &self.pages[p];
            if page.decoded.is_none() && b == page.first_block && page.last_doc < to {
                let pair = [(page.bound.max_freq, page.bound.min_norm)];
                visit(page.bound, &pair);
                b += page.blocks;
                continue;
            }
            let first = page.first_block;
            let decoded = self.page(p)?;
            for s in &decoded.skips[b - first..] {
                visit(s.impact, &decoded.impacts[s.impacts.0 as usize..s.impacts.1 as usize]);
                if s.last_doc >= to {
                    return Ok(());
                }
                b += 1;
            }
        }
        Ok(())
    }

    /// A bound over the blocks (from block `from` on) that hold documents in `from_doc..=to`.
    pub fn impact(&mut self, from: usize, from_doc: DocId, to: DocId) -> Result<BlockImpact> {
        let mut acc = BlockImpact::NONE;
        self.each_bound(from, from_doc, to, |bound, _| acc = acc.merge(bound))?;
        Ok(acc)
    }

    /// The competitive pairs of the same blocks, appended to `out`.
    pub fn impacts(
        &mut self,
        from: usize,
        from_doc: DocId,
        to: DocId,
        out: &mut Vec<(u32, u8)>,
    ) -> Result<()> {
        self.each_bound(from, from_doc, to, |_, pairs| out.extend_from_slice(pairs))
    }

    fn page(&mut self, p: usize) -> Result<&Decoded> {
        if self.pages[p].decoded.is_none() {
            let decoded = self.decode(&self.pages[p])?;
            let page = &self.pages[p];
            let last = decoded.skips.last().map(|s| s.last_doc);
            let bound = decoded.skips.iter().fold(BlockImpact::NONE, |acc, s| acc.merge(s.impact));
            if last != Some(page.last_doc) || bound != page.bound {
                return Err(self.corrupt(page, "skip page disagrees with the skip index"));
            }
            self.pages[p].decoded = Some(decoded);
        }
        Ok(self.pages[p].decoded.as_ref().unwrap())
    }

    fn corrupt(&self, page: &Page, what: &str) -> Error {
        Error::corrupt_at(self.data.name(), self.data.position(page.bytes.start).1, what)
    }

    /// Reads and checks a page's entries.
    fn decode(&self, page: &Page) -> Result<Decoded> {
        counters::record(DataKind::Skip, &self.data, page.bytes.start, page.bytes.len());
        let name = self.data.name();
        let bytes = self.data.read(page.bytes.clone())?;
        let mut r = ByteReader::at(name, &bytes, self.data.position(page.bytes.start).1);
        let present = self.sections.present();
        let mut at = page.starts;
        let mut prev = page.prev_last_doc;
        let mut skips = Vec::with_capacity(page.blocks);
        let mut impacts = Vec::new();
        for i in 0..page.blocks {
            let delta = match self.sections.compact {
                Some(_) => r.vint()? >> LONE_FREQ_BITS,
                None => r.vint()?,
            };
            if page.first_block + i > 0 && delta == 0 {
                return Err(r.corrupt("skip entries out of order"));
            }
            let last = prev.max(0) as u64 + delta;
            let last_doc = u32::try_from(last)
                .ok()
                .filter(|&l| l != TERMINATED)
                .ok_or_else(|| r.corrupt("doc id out of range"))?;
            let [doc_start, pos_start, off_start, bloom_start] = at;
            for (s, &has) in present.iter().enumerate() {
                if self.sections.sizes_implied() {
                    at[s] += page.lens[s];
                } else if has {
                    at[s] += r.vint()? as usize;
                }
            }
            let first = impacts.len();
            let bound = match self.sections.lone_freq {
                Some(max_freq) => {
                    // Norm byte 0 bounds every length (the search knows the norm of a list of one).
                    let min_norm = if self.sections.compact.is_some() { 0 } else { r.u8()? };
                    impacts.push((max_freq, min_norm));
                    BlockImpact { max_freq, min_norm }
                }
                None => read_impacts(&mut r, &mut impacts)?,
            };
            let range = (first as u32, impacts.len() as u32);
            let [doc_end, pos_end, off_end, bloom_end] = at;
            skips.push(Skip {
                prev_last_doc: prev,
                last_doc,
                doc_start,
                pos_start,
                off_start,
                bloom_start,
                doc_end,
                pos_end,
                off_end,
                bloom_end,
                impact: bound,
                impacts: range,
            });
            prev = i64::from(last_doc);
        }
        let ends: Vec<usize> = page.starts.iter().zip(page.lens).map(|(s, l)| s + l).collect();
        if at[..] != ends[..] || r.remaining() != 0 {
            return Err(self.corrupt(page, "skip entries do not add up to the record's sections"));
        }
        Ok(Decoded { skips, impacts })
    }
}

/// `Count:vint (FreqDelta:vint Norm:u8)^Count`, appended to `out`; returns their bound.
fn read_impacts(r: &mut ByteReader, out: &mut Vec<(u32, u8)>) -> Result<BlockImpact> {
    let count = r.vint()? as usize;
    if count == 0 || count > 256 {
        return Err(r.corrupt("bad impact count"));
    }
    let first = out.len();
    let mut freq = 0u32;
    for _ in 0..count {
        freq = freq.checked_add(r.vint_u32()?).ok_or_else(|| r.corrupt("impact frequency overflows"))?;
        out.push((freq, r.u8()?));
    }
    Ok(BlockImpact { max_freq: freq, min_norm: out[first].1 })
}

/// Reads the skip index into pages, checking that they add up to the record.
fn read_index(data: &FileSlice, layout: &SkipLayout) -> Result<Vec<Page>> {
    let bytes = data.read(layout.index.clone())?;
    let mut r = ByteReader::at(data.name(), &bytes, data.position(layout.index.start).1);
    counters::record(DataKind::Skip, data, layout.index.start, layout.index.len());
    let present = layout.sections.present();
    let pages = layout.blocks.div_ceil(PAGE_BLOCKS);
    let mut out = Vec::with_capacity(pages);
    let (mut prev, mut skip_at, mut at) = (-1i64, layout.entries.start, layout.starts);
    for p in 0..pages {
        let delta = r.vint()?;
        if p > 0 && delta == 0 {
            return Err(r.corrupt("skip index out of order"));
        }
        let last_doc = u32::try_from(prev.max(0) as u64 + delta)
            .ok()
            .filter(|&l| l != TERMINATED)
            .ok_or_else(|| r.corrupt("doc id out of range"))?;
        let skip_len = r.vint()? as usize;
        let mut lens = [0usize; 4];
        for (s, &has) in present.iter().enumerate() {
            if has {
                lens[s] = r.vint()? as usize;
            }
        }
        let max_freq = r.vint_u32()?;
        let min_norm = r.u8()?;
        let first_block = p * PAGE_BLOCKS;
        out.push(Page {
            first_block,
            blocks: PAGE_BLOCKS.min(layout.blocks - first_block),
            prev_last_doc: prev,
            last_doc,
            bytes: skip_at..skip_at + skip_len,
            starts: at,
            lens,
            bound: BlockImpact { max_freq, min_norm },
            decoded: None,
        });
        prev = i64::from(last_doc);
        skip_at += skip_len;
        for s in 0..4 {
            at[s] += lens[s];
        }
    }
    let ends: Vec<usize> = layout.starts.iter().zip(layout.lens).map(|(s, l)| s + l).collect();
    if skip_at != layout.entries.end || at[..] != ends[..] || r.remaining() != 0 {
        return Err(r.corrupt("skip index does not add up to the record's sections"));
    }
    Ok(out)
}
