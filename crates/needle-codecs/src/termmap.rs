//! The term map: an FST (the `fst` crate) from `(field, term)` to a 64-bit entry.
//!
//! ```text
//! TermsFile := FstBytes Footer(kind "TERM", version 1)
//! Key       := FieldId:u16 (big-endian, so keys sort by field first) TermBytes
//! Entry     := ZonePages:u16 (bits 48..64) | RecordOffset:u48 (bits 0..48)
//! ```
//!
//! `RecordOffset` is the byte offset of the term's grouped record in the
//! postings file. `ZonePages` is the size of the record's prefetch zone (header,
//! skip list, doc-id and frequency blocks) in 4 KiB pages, rounded up and
//! capped at 65,535: a query knows from the term map alone how much it will
//! read before it reads it. Example: a record at offset 8,192 whose zone is
//! 5,000 bytes has entry `0x0002_0000_0000_2000`.

use needle_core::{Error, FieldId, Result};

pub use crate::page::PAGE;
const OFFSET_BITS: u32 = 48;

/// Opens a term map's bytes (checksum verified), walking it whole once: the
/// `fst` crate trusts its bytes and may panic on a malformed node, so every
/// node a lookup can reach is decoded here, where a panic is caught and
/// becomes [`Error::Corrupt`] (a checksum-valid malformed map is a bug or a
/// crafted file, never a torn write). Every key must start with a field.
pub fn open<D: AsRef<[u8]>>(file: &str, bytes: D) -> Result<fst::Map<D>> {
    let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let map = fst::Map::new(bytes).map_err(|e| Error::corrupt(file, e.to_string()))?;
        walk(map.as_fst()).map_err(|what| Error::corrupt(file, what))?;
        Ok(map)
    }));
    walked.unwrap_or_else(|_| Err(Error::corrupt(file, "malformed term map (a node decodes out of bounds)")))
}

/// Walks every key's path, decoding each node on it. The builder writes a
/// node's targets before the node, so every transition must lead to a lower
/// address: a map breaking that is malformed, and may hold a cycle that would
/// make a walk (and a key) grow without end. One walk with no table of the
/// nodes seen: it was a fifth of opening a merged segment.
fn walk<D: AsRef<[u8]>>(fst: &fst::raw::Fst<D>) -> std::result::Result<(), &'static str> {
    let root = fst.root();
    if root.is_final() {
        return Err("a term map key without a field");
    }
    // (node, its next transition, the key's length at the node)
    let mut path = vec![(root.addr(), 0usize, 0usize)];
    while let Some((addr, next, depth)) = path.last_mut() {
        let node = fst.node(*addr);
        if *next == node.len() {
            path.pop();
            continue;
        }
        let to = node.transition(*next).addr;
        *next += 1;
        if to >= *addr {
            return Err("malformed term map (a transition to a node not written before it)");
        }
        let depth = *depth + 1;
        if depth < 2 && fst.node(to).is_final() {
            return Err("a term map key without a field");
        }
        path.push((to, 0, depth));
    }
    Ok(())
}

pub fn key(field: FieldId, term: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + term.len());
    k.extend_from_slice(&field.to_be_bytes());
    k.extend_from_slice(term);
    k
}

/// The keys around every term of `field`: from the first (inclusive) to
/// the next field's first (exclusive), for a range over the map.
pub fn field_keys(field: FieldId) -> (Vec<u8>, Vec<u8>) {
    (key(field, b""), key(field + 1, b""))
}

/// Splits a key into its field and term.
pub fn split_key(key: &[u8]) -> Option<(FieldId, &[u8])> {
    let field = FieldId::from_be_bytes(key.get(..2)?.try_into().ok()?);
    Some((field, &key[2..]))
}

pub fn pack_entry(offset: u64, zone_bytes: u64) -> u64 {
    let pages = zone_bytes.div_ceil(PAGE).min(u64::from(u16::MAX));
    (pages << OFFSET_BITS) | offset
}

/// `(record offset, prefetch zone in pages)`.
pub fn unpack_entry(entry: u64) -> (u64, u16) {
    (entry & ((1 << OFFSET_BITS) - 1), (entry >> OFFSET_BITS) as u16)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn example_from_the_docs() {
        assert_eq!(pack_entry(8192, 5000), 0x0002_0000_0000_2000);
    }

    fn built(keys: &[Vec<u8>]) -> Vec<u8> {
        let mut b = fst::MapBuilder::memory();
        for (i, k) in keys.iter().enumerate() {
            b.insert(k, i as u64).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn the_walk_refuses_cycles_and_keys_without_a_field() {
        // A map whose nodes form a cycle (found by fuzzing): refused, not walked forever.
        let cycle = include_bytes!("../../../fuzz/corpus/termmap/cycle-oom");
        assert!(open("t", &cycle[..]).unwrap_err().to_string().contains("malformed term map"));
        assert!(open("t", built(&[b"x".to_vec()])).is_err(), "a one-byte key");
        assert!(open("t", built(&[Vec::new()])).is_err(), "an empty key");
        let keys: Vec<Vec<u8>> =
            (0u16..300).flat_map(|f| [key(f, b"a"), key(f, b"ab"), key(f, b"b")]).collect();
        let map = open("t", built(&keys)).unwrap();
        assert_eq!(map.len(), keys.len());
    }

    proptest! {
        #[test]
        fn entries_round_trip(offset in 0u64..(1 << 48), zone in 0u64..(1 << 40)) {
            let (o, pages) = unpack_entry(pack_entry(offset, zone));
            prop_assert_eq!(o, offset);
            prop_assert_eq!(u64::from(pages), zone.div_ceil(PAGE).min(65535));
        }

        #[test]
        fn keys_round_trip(field in any::<u16>(), term in proptest::collection::vec(any::<u8>(), 0..20)) {
            let k = key(field, &term);
            prop_assert_eq!(split_key(&k), Some((field, &term[..])));
        }
    }
}
