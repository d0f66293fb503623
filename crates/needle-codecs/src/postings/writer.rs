//! Writes one grouped record (format: see the module above).

use super::{
    BlockImpact, BloomPostings, TermPostings, COMPACT, COMPACT_BLOCK, FLAG_BLOOM, FLAG_FILTERS_FIRST,
    FLAG_MIN_FREQ, FLAG_OFFSETS, FLAG_ONE_BLOCK, FLAG_PACKED_OFFSETS, FLAG_POSITIONS, FLAG_SKIP_INDEX,
    LONE_AFTER, LONE_BEFORE, LONE_FREQ_BITS, LONE_MAX_FREQ, PAGE_BLOCKS,
};
use crate::bitpack::{encode_block, encode_stream};
use crate::bloom::FilterShape;
use crate::bytes::write_vint;
use crate::BLOCK_LEN;

/// Bytes of each part of a record, for statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordSizes {
    pub header_and_skip: u64,
    pub docs: u64,
    pub positions: u64,
    pub offsets: u64,
    pub bloom: u64,
}

impl RecordSizes {
    /// The prefetch zone: everything a query that needs no positions reads.
    pub fn zone(&self) -> u64 {
        self.header_and_skip + self.docs
    }

    /// What a search may read: all but the offsets, which come last and
    /// only highlighting reads.
    pub fn searched(&self) -> u64 {
        self.zone() + self.bloom + self.positions
    }

    pub fn add(&mut self, o: &RecordSizes) {
        self.header_and_skip += o.header_and_skip;
        self.docs += o.docs;
        self.positions += o.positions;
        self.offsets += o.offsets;
        self.bloom += o.bloom;
    }
}

/// Appends the record for `p` to `out`. `norms` are the field's norm bytes by
/// document (for the skip entries' bounds), empty for fields without norms.
pub fn write_record(
    p: &TermPostings,
    with_positions: bool,
    with_offsets: bool,
    norms: &[u8],
    out: &mut Vec<u8>,
) -> RecordSizes {
    write_record_with(&mut RecordScratch::default(), p, [with_positions, with_offsets], norms, out)
}

/// The buffers a record is built in, kept from one record to the next by a
/// writer of many (most records are a posting or two: allocating them was
/// much of the cost).
#[derive(Default)]
pub struct RecordScratch {
    skip: Vec<u8>,
    docs: Vec<u8>,
    pos: Vec<u8>,
    off: Vec<u8>,
    bloom: Vec<u8>,
    values: Vec<u32>,
    written: Vec<BlockWritten>,
}

/// [`write_record`] in `scratch`'s buffers; `stored`: whether the field keeps positions, offsets.
pub fn write_record_with(
    scratch: &mut RecordScratch,
    p: &TermPostings,
    stored: [bool; 2],
    norms: &[u8],
    out: &mut Vec<u8>,
) -> RecordSizes {
    let [with_positions, with_offsets] = stored;
    // A list none of whose postings keeps filters has none.
    let filters = p.bloom.map(|b| (b, b.kept)).filter(|(_, kept)| p.freqs.iter().any(|&f| kept.stores(f)));
    let RecordScratch { skip, docs, pos, off, bloom, values, written } = scratch;
    (skip.clear(), docs.clear(), pos.clear(), off.clear(), bloom.clear(), values.clear(), written.clear());
    let mut prev_last: i64 = -1;
    let mut prev_last_for_delta = 0u32;
    let mut occ = 0usize;
    // Where the next group's filters start in `p.bloom`'s sides.
    let mut filters_at = 0;
    // One block's sections are the header's: its skip entry leaves their
    // sizes out, and a lone posting's doc and frequency are the entry's last
    // doc and the header's term frequency.
    let one_block = p.docs.len() <= BLOCK_LEN;
    let lone = p.docs.len() == 1;
    for (b, chunk) in p.docs.chunks(BLOCK_LEN).enumerate() {
        let freqs = &p.freqs[b * BLOCK_LEN..b * BLOCK_LEN + chunk.len()];
        let (d0, p0, o0) = (docs.len(), pos.len(), off.len());
        values.clear();
        for &d in chunk {
            values.push((i64::from(d) - prev_last - 1) as u32);
            prev_last = i64::from(d);
        }
        if !lone {
            encode_block(&values, docs);
            values.clear();
            values.extend(freqs.iter().map(|f| f - 1));
            encode_block(&values, docs);
        }
        let block_occ: usize = freqs.iter().map(|&f| f as usize).sum();
        if with_positions {
            encode_positions(&p.positions[occ..occ + block_occ], freqs, pos);
        }
        if with_offsets {
            encode_offsets(&p.offsets[occ..occ + block_occ], freqs, off);
        }
        let (bl0, s0) = (bloom.len(), skip.len());
        if let Some((filters, kept)) = &filters {
            filters_at = encode_bloom_group(filters, *kept, filters_at, freqs, bloom);
        }
        occ += block_occ;
        let last = *chunk.last().unwrap();
        write_vint(skip, u64::from(last - if b == 0 { 0 } else { prev_last_for_delta }));
        prev_last_for_delta = last;
        if !one_block {
            write_vint(skip, (docs.len() - d0) as u64);
            if with_positions {
                write_vint(skip, (pos.len() - p0) as u64);
            }
            if with_offsets {
                write_vint(skip, (off.len() - o0) as u64);
            }
            if filters.is_some() {
                write_vint(skip, (bloom.len() - bl0) as u64);
            }
        }
        let bound = if lone {
            // A lone posting's one impact: its frequency is the header's; only its norm is written.
            let norm = norms.get(last as usize).copied().unwrap_or(0);
            skip.push(norm);
            BlockImpact { max_freq: freqs[0], min_norm: norm }
        } else {
            encode_impacts(chunk, freqs, norms, skip)
        };
        let sizes = [skip.len() - s0, docs.len() - d0, pos.len() - p0, off.len() - o0, bloom.len() - bl0];
        written.push(BlockWritten { last_doc: last, sizes, bound });
    }
    let index = encode_skip_index(&written, [with_positions, with_offsets, filters.is_some()]);
    let start = out.len();
    let flags = (u8::from(with_positions) * FLAG_POSITIONS)
        | (u8::from(with_offsets) * (FLAG_OFFSETS | FLAG_PACKED_OFFSETS))
        | (u8::from(filters.is_some()) * (FLAG_BLOOM | FLAG_FILTERS_FIRST))
        | (u8::from(filters.is_some_and(|(_, kept)| kept.min_freq() > 1)) * FLAG_MIN_FREQ)
        | (u8::from(!index.is_empty()) * FLAG_SKIP_INDEX)
        | (u8::from(one_block) * FLAG_ONE_BLOCK);
    let ttf: u64 = p.freqs.iter().map(|&f| u64::from(f)).sum();
    // A compact record leaves out what its bytes give (see the module above).
    let compact = one_block
        && (!lone || ttf <= u64::from(LONE_MAX_FREQ))
        && filters.as_ref().is_none_or(|(_, kept)| kept.is_wiser() && kept.min_freq() == 1);
    if compact {
        let sizes = [with_positions.then_some(pos.len()), with_offsets.then_some(off.len())];
        write_compact_header(out, flags, p, ttf, sizes, skip, filters.is_some().then_some(bloom));
    } else {
        out.push(flags);
        write_full_header(
            out,
            p,
            ttf,
            [&*skip, &*docs, &*pos, &*off, &*bloom],
            filters.map(|(_, kept)| kept),
        );
        if !index.is_empty() {
            write_vint(out, index.len() as u64);
        }
    }
    out.extend_from_slice(&index);
    out.extend_from_slice(&skip);
    let header_and_skip = (out.len() - start) as u64;
    // A phrase reads a block's filters before (and mostly instead of) its
    // positions: next to the doc ids they share pages.
    for section in [&docs, &bloom, &pos, &off] {
        out.extend_from_slice(section);
    }
    RecordSizes {
        header_and_skip,
        docs: docs.len() as u64,
        positions: pos.len() as u64,
        offsets: off.len() as u64,
        bloom: bloom.len() as u64,
    }
}

/// A compact record's header (format 8: see the module above): its flags
/// and what its bytes do not give. `sizes`: of its positions and offsets, if
/// stored. One of one document takes `skip`'s entry into one vint of its doc
/// and frequency and its filters' bitmaps (`bloom`'s first two bytes) into
/// its flags.
fn write_compact_header(
    out: &mut Vec<u8>,
    flags: u8,
    p: &TermPostings,
    ttf: u64,
    sizes: [Option<usize>; 2],
    skip: &mut Vec<u8>,
    bloom: Option<&mut Vec<u8>>,
) {
    let flags = (flags & !(FLAG_MIN_FREQ | FLAG_FILTERS_FIRST | FLAG_PACKED_OFFSETS)) | COMPACT;
    if p.docs.len() > 1 {
        out.push(flags | COMPACT_BLOCK);
        write_vint(out, p.docs.len() as u64);
        write_vint(out, ttf - p.docs.len() as u64);
        for len in sizes.into_iter().chain([bloom.map(|b| b.len())]).flatten() {
            write_vint(out, len as u64);
        }
        return;
    }
    let sides = bloom.map_or(0, |b| {
        let sides = (b[0] * LONE_BEFORE) | (b[1] * LONE_AFTER);
        b.drain(..2);
        sides
    });
    out.push(flags | sides);
    skip.clear();
    write_vint(skip, (u64::from(p.docs[0]) << LONE_FREQ_BITS) | (ttf - 1));
}

/// A header's counts and section sizes (`sections`: the skip entries, docs,
/// positions, offsets and filters), and the filters' shape.
fn write_full_header(
    out: &mut Vec<u8>,
    p: &TermPostings,
    ttf: u64,
    sections: [&[u8]; 5],
    filters: Option<FilterShape>,
) {
    let [skip, docs, pos, off, bloom] = sections;
    write_vint(out, p.docs.len() as u64);
    write_vint(out, ttf - p.docs.len() as u64);
    write_vint(out, skip.len() as u64);
    // A lone posting has no doc block, so no size for it.
    if p.docs.len() != 1 {
        write_vint(out, docs.len() as u64);
    }
    write_vint(out, pos.len() as u64);
    write_vint(out, off.len() as u64);
    if let Some(kept) = filters {
        write_vint(out, bloom.len() as u64);
        if kept.is_wiser() {
            write_vint(out, 0);
        } else {
            write_vint(out, u64::from(kept.max_insertions()));
            write_vint(out, u64::from(kept.fp_millionths()));
        }
        if kept.min_freq() > 1 {
            write_vint(out, u64::from(kept.min_freq()));
        }
    }
}

/// What a block's skip entry says, for the skip index.
struct BlockWritten {
    last_doc: u32,
    /// Bytes of its skip entry, docs, positions, offsets and filters.
    sizes: [usize; 5],
    bound: BlockImpact,
}

/// The skip index of a list of more than `PAGE_BLOCKS` blocks (empty for a
/// shorter one): per page, its last doc (delta-coded), the bytes of its skip
/// entries and of each stored section, and its bound.
fn encode_skip_index(blocks: &[BlockWritten], stored: [bool; 3]) -> Vec<u8> {
    let mut out = Vec::new();
    if blocks.len() <= PAGE_BLOCKS {
        return out;
    }
    let mut prev_last = 0;
    for page in blocks.chunks(PAGE_BLOCKS) {
        let last = page.last().unwrap().last_doc;
        write_vint(&mut out, u64::from(last - prev_last));
        prev_last = last;
        let present = [true, true, stored[0], stored[1], stored[2]];
        for (s, &has) in present.iter().enumerate() {
            if has {
                write_vint(&mut out, page.iter().map(|b| b.sizes[s] as u64).sum());
            }
        }
        let bound = page.iter().fold(BlockImpact::NONE, |acc, b| acc.merge(b.bound));
        write_vint(&mut out, u64::from(bound.max_freq));
        out.push(bound.min_norm);
    }
    out
}

/// The block's competitive (frequency, norm) pairs: those no other document
/// of the block beats on both (a higher frequency and a shorter length),
/// ascending by frequency (so also by norm): `Count:vint (FreqDelta:vint Norm:u8)^Count`.
/// Returns their bound.
fn encode_impacts(docs: &[u32], freqs: &[u32], norms: &[u8], out: &mut Vec<u8>) -> BlockImpact {
    let mut pairs: Vec<(u32, u8)> =
        docs.iter().zip(freqs).map(|(&d, &f)| (f, norms.get(d as usize).copied().unwrap_or(0))).collect();
    pairs.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut frontier: Vec<(u32, u8)> = Vec::new();
    for (f, n) in pairs {
        if frontier.last().is_none_or(|&(_, best)| n < best) {
            frontier.push((f, n));
        }
    }
    frontier.reverse();
    let bound = BlockImpact { max_freq: frontier.last().unwrap().0, min_norm: frontier[0].1 };
    write_vint(out, frontier.len() as u64);
    let mut prev = 0;
    for (f, n) in frontier {
        write_vint(out, u64::from(f - prev));
        out.push(n);
        prev = f;
    }
    bound
}

fn encode_positions(positions: &[u32], freqs: &[u32], out: &mut Vec<u8>) {
    let mut deltas = Vec::with_capacity(positions.len());
    let mut i = 0;
    for &f in freqs {
        let mut prev = 0;
        for &p in &positions[i..i + f as usize] {
            deltas.push(p.wrapping_sub(prev));
            prev = p;
        }
        i += f as usize;
    }
    encode_stream(&deltas, out);
}

/// The block's start deltas (from the previous start in the same document),
/// bit-packed as positions are, then its lengths: one value when they are all
/// the same (a term's tokens mostly have one length), else bit-packed too.
fn encode_offsets(offsets: &[(u32, u32)], freqs: &[u32], out: &mut Vec<u8>) {
    let n: usize = freqs.iter().map(|&f| f as usize).sum();
    let (mut deltas, mut lengths) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut i = 0;
    for &f in freqs {
        let mut prev_start = 0u32;
        for &(s, e) in &offsets[i..i + f as usize] {
            deltas.push(s.wrapping_sub(prev_start));
            lengths.push(e.wrapping_sub(s));
            prev_start = s;
        }
        i += f as usize;
    }
    encode_stream(&deltas, out);
    match lengths.split_first() {
        Some((&first, rest)) if rest.iter().all(|&l| l == first) => write_vint(out, u64::from(first) + 1),
        _ => {
            write_vint(out, 0);
            encode_stream(&lengths, out);
        }
    }
}

/// One group: the before and after bitmaps of the non-empty filters `kept`
/// keeps of one block's postings (of frequencies `freqs`, their filters from
/// byte `at` of each side of `b`, laid out by `b.shape`), then those filters;
/// nothing when it keeps none. Returns where the next group's filters start in `b`.
fn encode_bloom_group(
    b: &BloomPostings,
    kept: FilterShape,
    at: usize,
    freqs: &[u32],
    out: &mut Vec<u8>,
) -> usize {
    let mut ranges = Vec::with_capacity(freqs.len());
    let mut end = at;
    for &f in freqs {
        let len = b.shape.bytes(f);
        ranges.push(if kept.stores(f) { end..end + len } else { end..end });
        end += len;
    }
    if ranges.iter().all(|r| r.is_empty()) {
        return end; // no posting of the block keeps filters: an empty group
    }
    for side in [b.before, b.after] {
        let mut bitmap = vec![0u8; freqs.len().div_ceil(8)];
        for (i, r) in ranges.iter().enumerate() {
            if side[r.clone()].iter().any(|&x| x != 0) {
                bitmap[i / 8] |= 1 << (i % 8);
            }
        }
        out.extend_from_slice(&bitmap);
    }
    for side in [b.before, b.after] {
        for r in &ranges {
            let f = &side[r.clone()];
            if f.iter().any(|&x| x != 0) {
                out.extend_from_slice(f);
            }
        }
    }
    end
}
