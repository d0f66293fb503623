//! Norms: one byte per document per text field, the field's length (token
//! count) quantized exactly as Lucene's `SmallFloat.intToByte4` does, so BM25
//! scores equal Lucene's.
//!
//! ```text
//! NormsFile := (Norm:u8 ^ DocCount) ^ NormedFieldCount  Footer(kind "NORM", version 1)
//! ```
//!
//! Fields appear in the order the segment's meta lists them (`norms_index`).
//! A document without the field has norm 0. Examples: length 3 -> byte 3;
//! length 100 -> byte 57, which decodes back to 96.

/// Lucene's `SmallFloat`: values below 24 are exact, larger ones keep 4
/// significant bits.
const MAX_INT4: u32 = long_to_int4(i32::MAX as u64);
const NUM_FREE_VALUES: u32 = 255 - MAX_INT4;

const fn long_to_int4(i: u64) -> u32 {
    let num_bits = 64 - i.leading_zeros();
    if num_bits < 4 {
        i as u32
    } else {
        let shift = num_bits - 4;
        let encoded = ((i >> shift) as u32) & 0x07;
        encoded | ((shift + 1) << 3)
    }
}

const fn int4_to_long(i: u32) -> u64 {
    let bits = (i & 0x07) as u64;
    let shift = (i >> 3) as i32 - 1;
    if shift == -1 {
        bits
    } else {
        (bits | 0x08) << shift
    }
}

/// Lucene's `SmallFloat.intToByte4`.
pub const fn encode_length(length: u32) -> u8 {
    if length < NUM_FREE_VALUES {
        length as u8
    } else {
        (NUM_FREE_VALUES + long_to_int4((length - NUM_FREE_VALUES) as u64)) as u8
    }
}

/// Lucene's `SmallFloat.byte4ToInt`.
pub const fn decode_length(norm: u8) -> u32 {
    let i = norm as u32;
    if i < NUM_FREE_VALUES {
        i
    } else {
        let decoded = NUM_FREE_VALUES as u64 + int4_to_long(i - NUM_FREE_VALUES);
        if decoded > i32::MAX as u64 {
            i32::MAX as u32
        } else {
            decoded as u32
        }
    }
}

/// `decode_length` for every byte, as BM25 uses it.
pub fn length_table() -> [u32; 256] {
    let mut t = [0; 256];
    for (i, v) in t.iter_mut().enumerate() {
        *v = decode_length(i as u8);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_lucene_smallfloat() {
        // Values printed by Lucene 10.6's SmallFloat.intToByte4 / byte4ToInt.
        assert_eq!(NUM_FREE_VALUES, 24);
        let encoded: Vec<u8> =
            [0, 1, 23, 24, 25, 100, 1000, 100_000].iter().map(|&n| encode_length(n)).collect();
        assert_eq!(encoded, [0, 1, 23, 24, 25, 57, 87, 140]);
        let decoded: Vec<u32> = [40, 41, 42, 49, 50, 56, 255].iter().map(|&b| decode_length(b)).collect();
        assert_eq!(decoded, [40, 42, 44, 60, 64, 88, 2_013_265_944]);
    }

    #[test]
    fn encoding_is_monotone_and_decoding_is_a_lower_bound() {
        let mut prev = 0;
        for len in 0..100_000u32 {
            let b = encode_length(len);
            assert!(b >= prev);
            assert!(decode_length(b) <= len);
            assert_eq!(encode_length(decode_length(b)), b);
            prev = b;
        }
    }
}
