//! The terms of an in-memory field: their bytes one after another in one
//! buffer, found through a hash table of term ids. A term costs no
//! allocation of its own, and its hash is taken once per token: grouping a
//! document's tokens ([`crate::grouped`]) hashes each, and filing the
//! document's postings here reuses the hash of each of its terms.

use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;

/// The hash terms are found by, in a document's groups and in a field's table.
pub(crate) fn term_hash(term: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(term);
    h.finish()
}

#[derive(Default)]
pub(crate) struct TermTable {
    ids: HashTable<u32>,
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
        self.ids.find(term_hash(term), |&id| self.term(id) == term).copied()
    }

    /// The id of `term` (whose [`term_hash`] is `hash`), added if new; and whether it was new.
    pub fn id(&mut self, hash: u64, term: &[u8]) -> (u32, bool) {
        let (ends, bytes) = (&self.ends, &self.bytes);
        if let Some(&id) = self.ids.find(hash, |&id| term_in(ends, bytes, id) == term) {
            return (id, false);
        }
        let id = self.ends.len() as u32;
        self.bytes.extend_from_slice(term);
        self.ends.push(self.bytes.len() as u32);
        let (ends, bytes) = (&self.ends, &self.bytes);
        self.ids.insert_unique(hash, id, |&id| term_hash(term_in(ends, bytes, id)));
        (id, true)
    }

    /// Every term with its id, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        (0..self.len() as u32).map(|id| (self.term(id), id))
    }
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
}
