//! Blocks of integers: a full block of 128 values is bit-packed (one byte
//! giving the bit width `w`, then `16 * w` bytes in the SIMD-friendly layout of
//! the `bitpacking` crate's `BitPacker4x`); a shorter block (a list's tail) is
//! written as vints.
//!
//! ```text
//! Block    := Packed | Patched | Tail
//! Packed   := BitWidth:u8 Bits[16 * BitWidth]                  (exactly 128 values, BitWidth <= 32)
//! Patched  := (128 + BitWidth):u8 Bits[16 * BitWidth] Count:u8 (Index:u8 High:u8)^Count
//! Tail     := VInt^n                                             (n < 128 values)
//! ```
//!
//! A patched block (written since postings format 7; Lucene's PFOR does the
//! same) packs the low `BitWidth` bits of every value and lists the few
//! values wider than that, by at most 8 bits: value `Index` is its packed
//! bits plus `High << BitWidth`, indexes ascending. A block of frequencies
//! that are mostly 1 with one 40 packs in 1 bit a value instead of 6. The
//! writer picks the width that makes the block smallest, with at most
//! [`MAX_EXCEPTIONS`] exceptions of a byte each: patching them is a few
//! instructions beside the unpacking (with more, and wider, the positions
//! of phrases of common words decoded measurably slower).

use bitpacking::{BitPacker, BitPacker4x};

use crate::bytes::{read_vint_lenient, write_vint};
use crate::BLOCK_LEN;

/// The flag of a patched block's first byte; the bit width is in the low six bits.
const PATCHED: u8 = 0x80;
const WIDTH_MASK: u8 = 0x3f;
/// The most values of a block written as exceptions.
pub const MAX_EXCEPTIONS: usize = 7;

pub fn encode_block(values: &[u32], out: &mut Vec<u8>) {
    if values.len() != BLOCK_LEN {
        for &v in values {
            write_vint(out, u64::from(v));
        }
        return;
    }
    let (bits, exceptions) = packed_width(values);
    out.push(bits | if exceptions > 0 { PATCHED } else { 0 });
    let start = out.len();
    out.resize(start + 16 * usize::from(bits), 0);
    let packer = BitPacker4x::new();
    if exceptions == 0 {
        packer.compress(values, &mut out[start..], bits);
        return;
    }
    let low_mask = (1u32 << bits) - 1; // exceptions make `bits` below 32
    let mut low = [0u32; BLOCK_LEN];
    for (l, &v) in low.iter_mut().zip(values) {
        *l = v & low_mask;
    }
    packer.compress(&low, &mut out[start..], bits);
    out.push(exceptions as u8);
    for (i, &v) in values.iter().enumerate() {
        if v > low_mask {
            out.extend_from_slice(&[i as u8, (v >> bits) as u8]);
        }
    }
}

/// The bit width that packs a full block smallest, and how many of its
/// values are then exceptions (at most [`MAX_EXCEPTIONS`]).
fn packed_width(values: &[u32]) -> (u8, usize) {
    // Values by bit length.
    let mut by_len = [0usize; 33];
    for &v in values {
        by_len[(32 - v.leading_zeros()) as usize] += 1;
    }
    let widest = (0..=32).rev().find(|&b| by_len[b] > 0).unwrap_or(0);
    let (mut best, mut best_cost) = ((widest, 0), 16 * widest);
    let mut exceptions = 0;
    for w in (widest.saturating_sub(8)..widest).rev() {
        exceptions += by_len[w + 1];
        if exceptions > MAX_EXCEPTIONS {
            break;
        }
        // The count, then an index and the high bits of each exception.
        let cost = 16 * w + 1 + 2 * exceptions;
        if cost < best_cost {
            (best, best_cost) = ((w, exceptions), cost);
        }
    }
    (best.0 as u8, best.1)
}

/// Decodes `out.len()` values from `bytes` at `*pos`, advancing `*pos`. Never
/// panics: a block cut short decodes as zeros (callers verify checksums first).
pub fn decode_block(bytes: &[u8], pos: &mut usize, out: &mut [u32]) {
    if out.len() != BLOCK_LEN {
        for v in out.iter_mut() {
            *v = read_vint_lenient(bytes, pos) as u32;
        }
        return;
    }
    let tag = bytes.get(*pos).copied().unwrap_or(0);
    let bits = (tag & WIDTH_MASK).min(32);
    *pos += 1;
    let len = 16 * usize::from(bits);
    match bytes.get(*pos..*pos + len) {
        Some(packed) => {
            BitPacker4x::new().decompress(packed, out, bits);
        }
        None => out.fill(0),
    }
    *pos += len;
    if tag & PATCHED != 0 {
        let count = usize::from(bytes.get(*pos).copied().unwrap_or(0));
        if let Some(patches) = bytes.get(*pos + 1..*pos + 1 + 2 * count) {
            for p in patches.chunks_exact(2) {
                // A patched block's width is below 32 (a damaged one's shift is masked, not a panic).
                out[usize::from(p[0]) % BLOCK_LEN] |= u32::from(p[1]) << (bits & 31);
            }
        }
        *pos += 1 + 2 * count;
    }
}

/// Value `i` of the full block at `at`, as [`decode_block`] gives it, found
/// without unpacking the others: where a block's one value is wanted. Never
/// panics: bytes a damaged block lacks read as zeros.
pub fn block_value(bytes: &[u8], at: usize, i: usize) -> u32 {
    let tag = bytes.get(at).copied().unwrap_or(0);
    let bits = u32::from((tag & WIDTH_MASK).min(32));
    let (packed_end, end) = full_block_end(bytes, at);
    let mut value = packed_value(bytes.get(at + 1..packed_end).unwrap_or(&[]), bits, i % BLOCK_LEN);
    if tag & PATCHED != 0 {
        let patches = bytes.get(packed_end + 1..end).unwrap_or(&[]);
        if let Some(p) = patches.chunks_exact(2).find(|p| usize::from(p[0]) == i) {
            value |= u32::from(p[1]) << (bits & 31);
        }
    }
    value
}

/// Value `i` of 128 packed in `bits` bits each by `BitPacker4x`: value `i`
/// is the `i / 4`-th of lane `i % 4`, whose bits run through the lane's
/// 32-bit word of each 16-byte group.
fn packed_value(packed: &[u8], bits: u32, i: usize) -> u32 {
    if bits == 0 {
        return 0;
    }
    let lane = 4 * (i % 4);
    let word = |w: usize| {
        let at = 16 * w + lane;
        packed.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let first_bit = (i / 4) * bits as usize;
    let (w, shift) = (first_bit / 32, (first_bit % 32) as u32);
    let mut value = word(w) >> shift;
    if shift + bits > 32 {
        value |= word(w + 1) << (32 - shift);
    }
    match bits {
        32 => value,
        _ => value & ((1 << bits) - 1),
    }
}

/// Where the full block at `at` ends, read from its first byte and, when it
/// is patched, its exception count; and where its packed bits end (what lies
/// between is its exceptions): how a reader skips blocks it does not need.
pub fn full_block_end(bytes: &[u8], at: usize) -> (usize, usize) {
    let tag = bytes.get(at).copied().unwrap_or(0);
    let packed_end = at + 1 + 16 * usize::from((tag & WIDTH_MASK).min(32));
    let patches = match tag & PATCHED {
        0 => 0,
        _ => 1 + 2 * usize::from(bytes.get(packed_end).copied().unwrap_or(0)),
    };
    (packed_end, packed_end + patches)
}

/// Encodes any number of values as full packed blocks followed by a vint tail.
pub fn encode_stream(values: &[u32], out: &mut Vec<u8>) {
    for chunk in values.chunks(BLOCK_LEN) {
        encode_block(chunk, out);
    }
}

/// Decodes `out.len()` values written by [`encode_stream`].
pub fn decode_stream(bytes: &[u8], pos: &mut usize, out: &mut [u32]) {
    for chunk in out.chunks_mut(BLOCK_LEN) {
        decode_block(bytes, pos, chunk);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Each value of a block of any one width, read alone.
        #[test]
        fn a_value_reads_alone_as_the_block_unpacks(width in 0u32..=32, seed in any::<u64>()) {
            let mut x = seed | 1;
            let values: Vec<u32> = (0..128)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if width == 0 { 0 } else { (x as u32) >> (32 - width) }
                })
                .collect();
            let mut buf = vec![7u8; 5];
            encode_block(&values, &mut buf);
            for (i, &v) in values.iter().enumerate() {
                prop_assert_eq!(block_value(&buf, 5, i), v, "value {}", i);
            }
        }

        #[test]
        fn streams_round_trip(values in proptest::collection::vec(any::<u32>().prop_map(|v| v >> (v % 32)), 0..600)) {
            let mut buf = Vec::new();
            encode_stream(&values, &mut buf);
            let mut out = vec![0; values.len()];
            let mut pos = 0;
            decode_stream(&buf, &mut pos, &mut out);
            prop_assert_eq!(out, values);
            prop_assert_eq!(pos, buf.len());
        }

        /// Blocks of small values with a few of any width, as frequencies and gaps mostly are.
        #[test]
        fn skewed_blocks_round_trip(
            small in proptest::collection::vec(0u32..4, 128),
            wide in proptest::collection::vec((0usize..128, any::<u32>()), 0..24),
        ) {
            let mut values = small;
            for (i, v) in wide {
                values[i] = v;
            }
            let mut buf = Vec::new();
            encode_block(&values, &mut buf);
            prop_assert_eq!(full_block_end(&buf, 0).1, buf.len());
            for (i, &v) in values.iter().enumerate() {
                prop_assert_eq!(block_value(&buf, 0, i), v, "value {}", i);
            }
            let (mut out, mut pos) = (vec![0; 128], 0);
            decode_block(&buf, &mut pos, &mut out);
            prop_assert_eq!(out, values);
            prop_assert_eq!(pos, buf.len());
        }
    }

    #[test]
    fn a_full_block_is_packed() {
        let values: Vec<u32> = (0..128).map(|i| i % 8).collect();
        let mut buf = Vec::new();
        encode_block(&values, &mut buf);
        assert_eq!(buf.len(), 1 + 16 * 3);
        assert_eq!(full_block_end(&buf, 0), (buf.len(), buf.len()));
    }

    /// Ones with two outliers pack in one bit a value, the outliers' high
    /// bits listed after: 1 + 16 + 1 + 2 * 2 bytes, not 1 + 16 * 9.
    #[test]
    fn a_few_wide_values_are_exceptions() {
        let mut values = vec![1u32; 128];
        (values[5], values[90]) = (40, 300);
        let mut buf = Vec::new();
        encode_block(&values, &mut buf);
        assert_eq!(buf[0], PATCHED | 1);
        assert_eq!(buf.len(), 1 + 16 + 1 + 2 * 2);
        assert_eq!(full_block_end(&buf, 0), (17, buf.len()));
        let (mut out, mut pos) = (vec![0; 128], 0);
        decode_block(&buf, &mut pos, &mut out);
        assert_eq!((out, pos), (values, buf.len()));
    }

    /// Past `MAX_EXCEPTIONS` wide values, or one wider by more than 8 bits,
    /// the block is packed wider.
    #[test]
    fn many_or_far_wider_values_widen_the_block() {
        let values: Vec<u32> = (0..128).map(|i| if i % 16 == 0 { 1 << 20 } else { 1 }).collect();
        let mut buf = Vec::new();
        encode_block(&values, &mut buf);
        assert_eq!((buf[0], buf.len()), (21, 1 + 16 * 21));
        let mut values = vec![1u32; 128];
        values[7] = 1 << 20;
        buf.clear();
        encode_block(&values, &mut buf);
        assert_eq!((buf[0], buf.len()), (PATCHED | 13, 1 + 16 * 13 + 1 + 2));
    }

    /// A patched block cut short or with bad indexes decodes without panicking.
    #[test]
    fn a_damaged_patched_block_never_panics() {
        let mut values = vec![0u32; 128];
        values[3] = u32::MAX;
        let mut buf = Vec::new();
        encode_block(&values, &mut buf);
        for cut in 0..buf.len() {
            let (mut out, mut pos) = (vec![0; 128], 0);
            decode_block(&buf[..cut], &mut pos, &mut out);
            full_block_end(&buf[..cut], 0);
        }
        let mut bad = buf.clone();
        let at = full_block_end(&buf, 0).0 + 1;
        bad[at] = 255;
        let (mut out, mut pos) = (vec![0; 128], 0);
        decode_block(&bad, &mut pos, &mut out);
    }
}
