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

use fst::Streamer;
use needle_core::{Error, FieldId, Result};

pub use crate::page::PAGE;
const OFFSET_BITS: u32 = 48;

/// Opens a term map's bytes (checksum verified), walking it whole once: the
/// `fst` crate trusts its bytes and may panic on a malformed node, so every
/// node a lookup can reach is decoded here, where a panic is caught and
/// becomes [`Error::Corrupt`] (a checksum-valid malformed map is a bug or a
/// crafted file, never a torn write). Every key must start with a field.
/// A map whose nodes form a cycle is refused before the walk, which would
/// otherwise never end (its key growing until memory runs out).
pub fn open<D: AsRef<[u8]>>(file: &str, bytes: D) -> Result<fst::Map<D>> {
    let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let map = fst::Map::new(bytes).map_err(|e| Error::corrupt(file, e.to_string()))?;
        if has_cycle(map.as_fst()) {
            return Err(Error::corrupt(file, "malformed term map (a cycle among its nodes)"));
        }
        let mut stream = map.stream();
        while let Some((key, _)) = stream.next() {
            if key.len() < 2 {
                return Err(Error::corrupt(file, "a term map key without a field"));
            }
        }
        drop(stream);
        Ok(map)
    }));
    walked.unwrap_or_else(|_| Err(Error::corrupt(file, "malformed term map (a node decodes out of bounds)")))
}

/// Whether a transition leads back to a node on the path to it: a
/// depth-first walk of the nodes (each visited once, so as long as the map
/// has nodes), not of the keys.
fn has_cycle<D: AsRef<[u8]>>(fst: &fst::raw::Fst<D>) -> bool {
    // Node address -> whether its walk is finished (false: it is on the current path).
    let mut seen: std::collections::HashMap<fst::raw::CompiledAddr, bool> = Default::default();
    let root = fst.root().addr();
    seen.insert(root, false);
    let mut path = vec![(root, 0usize)];
    while let Some((addr, next)) = path.last_mut() {
        let node = fst.node(*addr);
        if *next == node.len() {
            seen.insert(*addr, true);
            path.pop();
            continue;
        }
        let to = node.transition(*next).addr;
        *next += 1;
        match seen.get(&to) {
            Some(false) => return true,
            Some(true) => {}
            None => {
                seen.insert(to, false);
                path.push((to, 0));
            }
        }
    }
    false
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
