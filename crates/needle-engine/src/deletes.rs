//! Deleted documents of a segment: a bitset beside the immutable segment.
//!
//! ```text
//! NAME.del.GEN := Word:u64^ceil(max_doc / 64)  Footer(kind "DELS", version 1)
//! ```
//!
//! Bit `d % 64` of word `d / 64` is set when document `d` is deleted. A new
//! generation is written whenever a commit has new deletions for the segment,
//! and the manifest names the generation in force; merges drop deleted documents.

use needle_codecs::footer;
use needle_core::{Deletes, DocId, Error, Result};

const KIND: &[u8; 4] = b"DELS";
const VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteBits {
    words: Vec<u64>,
    count: u32,
}

impl DeleteBits {
    pub fn new(max_doc: DocId) -> Self {
        DeleteBits { words: vec![0; (max_doc as usize).div_ceil(64)], count: 0 }
    }

    /// Marks `doc` deleted; returns whether it was live.
    pub fn delete(&mut self, doc: DocId) -> bool {
        let (w, bit) = ((doc / 64) as usize, 1u64 << (doc % 64));
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let was_live = self.words[w] & bit == 0;
        self.words[w] |= bit;
        self.count += u32::from(was_live);
        was_live
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// The file bytes for a segment of `max_doc` documents (the bitset may have
    /// grown with its segment, or not yet reached its end).
    pub fn encode(&self, max_doc: DocId) -> Vec<u8> {
        let words = (max_doc as usize).div_ceil(64);
        let mut out = Vec::with_capacity(words * 8 + footer::FOOTER_LEN);
        for i in 0..words {
            out.extend_from_slice(&self.words.get(i).copied().unwrap_or(0).to_le_bytes());
        }
        footer::append(&mut out, KIND, VERSION);
        out
    }

    pub fn decode(file: &str, bytes: &[u8], max_doc: DocId) -> Result<Self> {
        let (len, _) = footer::verify(file, bytes, KIND, VERSION)?;
        if len != (max_doc as usize).div_ceil(64) * 8 {
            return Err(Error::corrupt(file, "deletions do not match the segment's document count"));
        }
        let words: Vec<u64> =
            bytes[..len].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        let count = words.iter().map(|w| w.count_ones()).sum();
        Ok(DeleteBits { words, count })
    }
}

impl Deletes for DeleteBits {
    fn is_deleted(&self, doc: DocId) -> bool {
        self.words.get((doc / 64) as usize).is_some_and(|w| w & (1 << (doc % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_count() {
        let mut d = DeleteBits::new(130);
        assert!(d.delete(3));
        assert!(!d.delete(3));
        d.delete(129);
        let back = DeleteBits::decode("x.del", &d.encode(130), 130).unwrap();
        assert_eq!(back, d);
        let mut grown = DeleteBits::new(0);
        grown.delete(5);
        assert_eq!(DeleteBits::decode("x.del", &grown.encode(300), 300).unwrap().count(), 1);
        assert!(back.is_deleted(129) && !back.is_deleted(128));
        assert_eq!(back.count(), 2);
        assert!(DeleteBits::decode("x.del", &d.encode(130), 200).is_err());
    }
}
