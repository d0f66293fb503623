//! Blocks of integers: a full block of 128 values is bit-packed (one byte
//! giving the bit width `w`, then `16 * w` bytes in the SIMD-friendly layout of
//! the `bitpacking` crate's `BitPacker4x`); a shorter block (a list's tail) is
//! written as vints.
//!
//! ```text
//! Block    := Packed | Tail
//! Packed   := BitWidth:u8 Bits[16 * BitWidth]     (exactly 128 values)
//! Tail     := VInt^n                               (n < 128 values)
//! ```

use bitpacking::{BitPacker, BitPacker4x};

use crate::bytes::{read_vint_lenient, write_vint};
use crate::BLOCK_LEN;

pub fn encode_block(values: &[u32], out: &mut Vec<u8>) {
    if values.len() == BLOCK_LEN {
        let packer = BitPacker4x::new();
        let bits = packer.num_bits(values);
        out.push(bits);
        let start = out.len();
        out.resize(start + 16 * bits as usize, 0);
        packer.compress(values, &mut out[start..], bits);
    } else {
        for &v in values {
            write_vint(out, u64::from(v));
        }
    }
}

/// Decodes `out.len()` values from `bytes` at `*pos`, advancing `*pos`. Never
/// panics: a block cut short decodes as zeros (callers verify checksums first).
pub fn decode_block(bytes: &[u8], pos: &mut usize, out: &mut [u32]) {
    if out.len() == BLOCK_LEN {
        let bits = bytes.get(*pos).copied().unwrap_or(0).min(32);
        *pos += 1;
        let len = 16 * bits as usize;
        match bytes.get(*pos..*pos + len) {
            Some(packed) => {
                BitPacker4x::new().decompress(packed, out, bits);
            }
            None => out.fill(0),
        }
        *pos += len;
    } else {
        for v in out.iter_mut() {
            *v = read_vint_lenient(bytes, pos) as u32;
        }
    }
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
    }

    #[test]
    fn a_full_block_is_packed() {
        let values: Vec<u32> = (0..128).map(|i| i % 8).collect();
        let mut buf = Vec::new();
        encode_block(&values, &mut buf);
        assert_eq!(buf.len(), 1 + 16 * 3);
    }
}
