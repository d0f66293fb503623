//! The terms of an in-memory field: their bytes one after another in one
//! buffer, found through a hash table of term ids. A term costs no
//! allocation of its own, and its hash is taken once per token: grouping a
//! document's tokens ([`crate::grouped`]) hashes each, and filing the
//! document's postings here reuses the hash of each of its terms. A table
//! slot holds its term's id, length and first eight bytes, so a lookup of a
//! term of up to eight bytes (most words) reads nothing but its slot, and a
//! longer one only its bytes besides.
//!
//! In a table of a million terms each slot read is a cache miss, taken for
//! every distinct term of every document. The table is open addressing with
//! linear probing over a plain array (not `hashbrown`) so that a caller can
//! ask for the slot of a term it will look up a few terms later
//! ([`TermTable::prefetch`]): a document's lookups then wait for memory
//! together rather than one after another.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// The hash terms are found by, in a document's groups and in a field's table.
pub(crate) fn term_hash(term: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(term);
    h.finish()
}

/// A term's first eight bytes ([`prefix`]), length and id; `id` [`EMPTY`] in a free slot.
#[derive(Clone, Copy)]
struct Slot {
    prefix: u64,
    len: u32,
    id: u32,
}

const EMPTY: u32 = u32::MAX;
const FREE: Slot = Slot { prefix: 0, len: 0, id: EMPTY };

/// The table starts with this many slots and doubles when half are taken.
const FIRST_SLOTS: usize = 1024;

/// The first eight bytes of `term` (fewer padded with zeros), little-endian.
/// Taken for every lookup: a term shorter than eight bytes is read as two
/// overlapping halves (the bytes both hold are the same, so or-ing them is
/// exact), not copied into a buffer by a `memcpy` call.
#[inline]
pub(crate) fn prefix(term: &[u8]) -> u64 {
    let n = term.len();
    let le32 = |at: usize| u64::from(u32::from_le_bytes(term[at..at + 4].try_into().unwrap()));
    let le16 = |at: usize| u64::from(u16::from_le_bytes(term[at..at + 2].try_into().unwrap()));
    match n {
        8.. => u64::from_le_bytes(term[..8].try_into().unwrap()),
        4..8 => le32(0) | le32(n - 4) << (8 * (n - 4)),
        2..4 => le16(0) | le16(n - 2) << (8 * (n - 2)),
        1 => u64::from(term[0]),
        _ => 0,
    }
}

#[derive(Default)]
pub(crate) struct TermTable {
    /// A power of two of slots (none before the first term), at most half taken.
    slots: Vec<Slot>,
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
        self.find(term_hash(term), term).ok()
    }

    /// Asks for the slot where a lookup of a term of hash `hash` starts to be
    /// brought into the cache (see the module documentation).
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        if !self.slots.is_empty() {
            needle_core::prefetch(&self.slots, self.home(hash));
        }
    }

    /// The slot a term of hash `hash` is looked for from. Fx hashes are
    /// multiplied once more so the slot depends on all of their bits.
    fn home(&self, hash: u64) -> usize {
        let mixed = hash.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// The id of `term`, or the free slot where it would go.
    fn find(&self, hash: u64, term: &[u8]) -> Result<u32, usize> {
        if self.slots.is_empty() {
            return Err(0);
        }
        let (first, mask) = (prefix(term), self.slots.len() - 1);
        let mut at = self.home(hash);
        loop {
            let s = self.slots[at];
            if s.id == EMPTY {
                return Err(at);
            }
            if s.len as usize == term.len()
                && s.prefix == first
                && (term.len() <= 8 || self.term(s.id) == term)
            {
                return Ok(s.id);
            }
            at = (at + 1) & mask;
        }
    }

    /// The id of `term` (whose [`term_hash`] is `hash`), added if new; and whether it was new.
    pub fn id(&mut self, hash: u64, term: &[u8]) -> (u32, bool) {
        let free = match self.find(hash, term) {
            Ok(id) => return (id, false),
            Err(free) => free,
        };
        let id = self.ends.len() as u32;
        self.bytes.extend_from_slice(term);
        self.ends.push(self.bytes.len() as u32);
        let slot = Slot { prefix: prefix(term), len: term.len() as u32, id };
        if 2 * self.len() > self.slots.len() {
            self.grow();
            self.place(hash, slot);
        } else {
            self.slots[free] = slot;
        }
        (id, true)
    }

    /// Doubles the slots (or makes the first ones) and places every term again.
    fn grow(&mut self) {
        let size = (2 * self.slots.len()).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![FREE; size]);
        for s in old.into_iter().filter(|s| s.id != EMPTY) {
            self.place(term_hash(self.term(s.id)), s);
        }
    }

    /// Puts `slot` in the first free slot from its term's home.
    fn place(&mut self, hash: u64, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut at = self.home(hash);
        while self.slots[at].id != EMPTY {
            at = (at + 1) & mask;
        }
        self.slots[at] = slot;
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
            assert_eq!(table.find(term_hash(words[a]), words[b]).ok(), None, "{:?}", words[b]);
        }
    }

    proptest::proptest! {
        /// A term's prefix is its first eight bytes, fewer padded with zeros.
        #[test]
        fn prefix_is_the_first_eight_bytes(term in proptest::collection::vec(proptest::num::u8::ANY, 0..12)) {
            let mut b = [0u8; 8];
            let n = term.len().min(8);
            b[..n].copy_from_slice(&term[..n]);
            proptest::prop_assert_eq!(prefix(&term), u64::from_le_bytes(b));
        }
    }

    proptest::proptest! {
        /// Through several doublings of the table, every term keeps the id it
        /// was first given and only new terms get new ids, as a map would.
        /// Terms are drawn from few bytes, so many share lengths and first bytes.
        #[test]
        fn ids_are_those_a_map_gives(terms in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..12), 1..6000)) {
            let mut table = TermTable::default();
            let mut model = std::collections::HashMap::new();
            for t in &terms {
                let next = model.len() as u32;
                let expected = *model.entry(t.clone()).or_insert(next);
                proptest::prop_assert_eq!(table.id(term_hash(t), t), (expected, expected == next));
            }
            proptest::prop_assert_eq!(table.len(), model.len());
            for (t, &id) in &model {
                proptest::prop_assert_eq!(table.get(t), Some(id));
                proptest::prop_assert_eq!(table.term(id), &t[..]);
            }
            proptest::prop_assert_eq!(table.get(&[9u8; 3]), None);
        }
    }
}
