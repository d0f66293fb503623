//! The terms of an in-memory field: their bytes one after another in one
//! buffer, found through a hash table of term ids. A term costs no
//! allocation of its own, and its hash is taken once per token: grouping a
//! document's tokens ([`crate::grouped`]) hashes each, and filing the
//! document's postings here reuses the hash of each of its terms. A table
//! slot holds its term's place in the buffer and its first eight bytes beside
//! its id, so a lookup of a term of up to eight bytes (most words) reads
//! neither where the term lies nor its bytes, and a longer one only its
//! bytes: in a table of a million terms each read is a cache miss, taken for
//! every distinct term of every document.

use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;

/// The hash terms are found by, in a document's groups and in a field's table.
pub(crate) fn term_hash(term: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(term);
    h.finish()
}

/// A term's id, where its bytes lie in [`TermTable::bytes`] and its first bytes ([`prefix`]).
#[derive(Clone, Copy)]
struct Slot {
    id: u32,
    start: u32,
    len: u32,
    prefix: u64,
}

/// The first eight bytes of `term` (fewer padded with zeros), little-endian.
pub(crate) fn prefix(term: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = term.len().min(8);
    b[..n].copy_from_slice(&term[..n]);
    u64::from_le_bytes(b)
}

#[derive(Default)]
pub(crate) struct TermTable {
    ids: HashTable<Slot>,
    /// Where each term's bytes end in `bytes` (term `i` starts where `i - 1` ends).
    ends: Vec<u32>,
    bytes: Vec<u8>,
}

impl TermTable {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of term `id`.
    pub fn term(&self, id: u32) -> &[u8] {
        term_in(&self.ends, &self.bytes, id)
    }

    pub fn get(&self, term: &[u8]) -> Option<u32> {
        self.find(term_hash(term), term)
    }

    fn find(&self, hash: u64, term: &[u8]) -> Option<u32> {
        let (bytes, first) = (&self.bytes, prefix(term));
        let holds = |s: &Slot| {
            s.len as usize == term.len()
                && s.prefix == first
                && (term.len() <= 8 || slot_bytes(bytes, s) == term)
        };
        self.ids.find(hash, holds).map(|s| s.id)
    }

    /// The id of `term` (whose [`term_hash`] is `hash`), added if new; and whether it was new.
    pub fn id(&mut self, hash: u64, term: &[u8]) -> (u32, bool) {
        if let Some(id) = self.find(hash, term) {
            return (id, false);
        }
        let slot = Slot {
            id: self.ends.len() as u32,
            start: self.bytes.len() as u32,
            len: term.len() as u32,
            prefix: prefix(term),
        };
        self.bytes.extend_from_slice(term);
        self.ends.push(self.bytes.len() as u32);
        let bytes = &self.bytes;
        self.ids.insert_unique(hash, slot, |s| term_hash(slot_bytes(bytes, s)));
        (slot.id, true)
    }

    /// Every term with its id, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        (0..self.len() as u32).map(|id| (self.term(id), id))
    }
}

fn slot_bytes<'a>(bytes: &'a [u8], s: &Slot) -> &'a [u8] {
    &bytes[s.start as usize..(s.start + s.len) as usize]
}

fn term_in<'a>(ends: &[u32], bytes: &'a [u8], id: u32) -> &'a [u8] {
    let end = ends[id as usize] as usize;
    let start = id.checked_sub(1).map_or(0, |p| ends[p as usize] as usize);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_get_one_id_each_and_read_back() {
        let mut table = TermTable::default();
        let words: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("w{}", i % 1700).into_bytes()).collect();
        let mut ids = Vec::new();
        for w in &words {
            let (id, new) = table.id(term_hash(w), w);
            assert_eq!(new, id as usize == ids.len() && !ids.contains(&id), "{w:?}");
            if new {
                ids.push(id);
            }
        }
        assert_eq!(table.len(), 1700);
        for w in &words {
            let id = table.get(w).expect("added");
            assert_eq!(table.term(id), &w[..]);
        }
        assert_eq!(table.get(b"w1700"), None);
        assert_eq!(table.get(b""), None);
        let (empty, new) = table.id(term_hash(b""), b"");
        assert!(new && table.term(empty).is_empty() && table.get(b"") == Some(empty));
        assert_eq!(table.iter().count(), 1701);
    }

    #[test]
    fn terms_sharing_their_first_eight_bytes_or_padded_with_zeros_stay_apart() {
        let mut table = TermTable::default();
        let words: [&[u8]; 6] =
            [b"internationalization", b"internationalisation", b"internat", b"internat\0", b"in", b"in\0\0"];
        for (id, w) in words.iter().enumerate() {
            assert_eq!(table.id(term_hash(w), w), (id as u32, true), "{w:?}");
        }
        for (id, w) in words.iter().enumerate() {
            assert_eq!(table.get(w), Some(id as u32), "{w:?}");
            assert_eq!(table.id(term_hash(w), w), (id as u32, false));
        }
        assert_eq!(table.get(b"internationalizatio"), None);
        // Looked up under another term's hash, a term is compared with that
        // term's slot: alike in length and first bytes is not the same term.
        for (a, b) in [(0, 1), (1, 0), (2, 3), (4, 5), (5, 4)] {
            assert_eq!(table.find(term_hash(words[a]), words[b]), None, "{:?}", words[b]);
        }
    }
}
