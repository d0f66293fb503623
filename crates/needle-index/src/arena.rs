//! An append-only byte arena that an in-memory segment's writer fills while
//! its readers read what was there when they looked.
//!
//! Every term's postings live here as one chain of slices (see
//! `mem_postings`), so a term costs no allocation of its own: a segment of a
//! few hundred thousand terms would otherwise make as many small vectors, most
//! of them a posting or two. A chain's first slice holds exactly what it was
//! made for (most terms are seen once); each next one is twice the size of the
//! one before, up to [`MAX_SLICE`] bytes. A slice ends with the address of the
//! next (8 bytes: page, then byte, little-endian), written when the next is
//! made, before any byte of it. So nothing is copied or left behind as a
//! chain grows; what is lost is the room left in each chain's last slice.
//!
//! Pages are never moved or freed while a reader holds them, and a byte is
//! written once, before any reader is told of it: the writer appends under
//! the segment's write lock and a reader learns where bytes end under its
//! read lock, so the lock orders the writes before the reads. Bytes are
//! atomics (plain loads and stores at `Relaxed`) so a page can be written
//! through a shared reference while readers hold it, without `unsafe`.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

/// The first page; each next one is twice the last, up to [`MAX_PAGE`], so
/// a segment of a few documents (a live index's tail) stays small.
const FIRST_PAGE: usize = 4 << 10;
const MAX_PAGE: usize = 1 << 20;
/// The largest slice after a chain's first, its link included.
const MAX_SLICE: usize = 4 << 10;
/// A slice's link to the next.
const LINK: usize = 8;

type Page = Arc<[AtomicU8]>;

/// Where a byte is: a page and a byte in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Addr {
    page: u32,
    at: u32,
}

/// A place in a chain: the next byte's address, the bytes left in its slice
/// before the slice's link, and how many slices came before it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cursor {
    at: Addr,
    room: u32,
    level: u8,
}

impl Cursor {
    /// After `n` bytes of room.
    fn skip(&mut self, n: usize) {
        self.at.at += n as u32;
        self.room -= n as u32;
    }
}

/// The room of a chain's slice after `level` others (the first holds what it was made for).
fn slice_room(level: u8) -> usize {
    (16usize << level.min(8)).min(MAX_SLICE) - LINK
}

/// The writer's side.
#[derive(Default)]
pub(crate) struct Arena {
    pages: Arc<Vec<Page>>,
    /// Bytes taken in the last page.
    used: usize,
    /// Bytes of every page.
    bytes: usize,
}

impl Arena {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// What readers read through: the pages as they are now.
    pub fn pages(&self) -> Pages {
        Pages(self.pages.clone())
    }

    fn alloc(&mut self, len: usize) -> Addr {
        let room = self.pages.last().map_or(0, |p| p.len() - self.used);
        if room < len {
            let size = self.pages.last().map_or(FIRST_PAGE, |p| 2 * p.len()).min(MAX_PAGE).max(len);
            let page: Page = (0..size).map(|_| AtomicU8::new(0)).collect();
            // A reader holding the list keeps its copy; the pages are shared.
            Arc::make_mut(&mut self.pages).push(page);
            (self.used, self.bytes) = (0, self.bytes + size);
        }
        let addr = Addr { page: (self.pages.len() - 1) as u32, at: self.used as u32 };
        self.used += len;
        addr
    }

    fn write(&self, addr: Addr, bytes: &[u8]) {
        let at = addr.at as usize;
        for (t, &b) in self.pages[addr.page as usize][at..at + bytes.len()].iter().zip(bytes) {
            t.store(b, Relaxed);
        }
    }

    /// Asks for the byte at `end` to be brought into the cache (see `needle_core::prefetch`).
    #[inline]
    pub fn prefetch(&self, end: Cursor) {
        if let Some(page) = self.pages.get(end.at.page as usize) {
            needle_core::prefetch(page, end.at.at as usize);
        }
    }

    /// A new chain whose first slice holds `room` bytes.
    pub fn chain(&mut self, room: usize) -> Cursor {
        Cursor { at: self.alloc(room + LINK), room: room as u32, level: 0 }
    }

    /// Appends `bytes` at the end of a chain (`end`, moved past them).
    pub fn append(&mut self, end: &mut Cursor, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if end.room == 0 {
                let level = end.level.saturating_add(1);
                let room = slice_room(level);
                let next = self.alloc(room + LINK);
                let mut link = [0u8; LINK];
                link[..4].copy_from_slice(&next.page.to_le_bytes());
                link[4..].copy_from_slice(&next.at.to_le_bytes());
                self.write(end.at, &link);
                *end = Cursor { at: next, room: room as u32, level };
            }
            let n = bytes.len().min(end.room as usize);
            self.write(end.at, &bytes[..n]);
            end.skip(n);
            bytes = &bytes[n..];
        }
    }
}

/// A reader's handle on the pages: cheap to clone, and it keeps them alive.
#[derive(Clone, Default)]
pub(crate) struct Pages(Arc<Vec<Page>>);

impl Pages {
    fn bytes(&self, addr: Addr, len: usize) -> &[AtomicU8] {
        let at = addr.at as usize;
        &self.0[addr.page as usize][at..at + len]
    }

    /// Replaces `out` with the `len` bytes of a chain from `from`, which were
    /// written before this reader learnt of them.
    pub fn read(&self, from: Cursor, len: u32, out: &mut Vec<u8>) {
        out.clear();
        let (mut c, mut left) = (from, len as usize);
        while left > 0 {
            if c.room == 0 {
                let mut link = [0u8; LINK];
                for (l, b) in link.iter_mut().zip(self.bytes(c.at, LINK)) {
                    *l = b.load(Relaxed);
                }
                let word = |i: usize| u32::from_le_bytes([link[i], link[i + 1], link[i + 2], link[i + 3]]);
                let level = c.level.saturating_add(1);
                c = Cursor { at: Addr { page: word(0), at: word(4) }, room: slice_room(level) as u32, level };
            }
            let n = left.min(c.room as usize);
            out.extend(self.bytes(c.at, n).iter().map(|b| b.load(Relaxed)));
            c.skip(n);
            left -= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_grow_without_changing_what_a_reader_holds() {
        let mut arena = Arena::default();
        let (mut a, mut b) = (arena.chain(4), arena.chain(4));
        let (a0, b0) = (a, b);
        let mut middle = a;
        for i in 0..3000u32 {
            if i == 1000 {
                middle = a;
            }
            let end = if i % 2 == 0 { &mut a } else { &mut b };
            arena.append(end, &i.to_le_bytes());
        }
        let held = arena.pages();
        let want: Vec<u8> = (0..3000u32).step_by(2).flat_map(u32::to_le_bytes).collect();
        // A run longer than a page, written after the reader looked.
        arena.append(&mut a, &vec![7; 3 * MAX_PAGE]);
        let mut out = Vec::new();
        held.read(a0, want.len() as u32, &mut out);
        assert_eq!(out, want, "the chain as it was, read through the old pages");
        held.read(middle, 4000, &mut out);
        assert_eq!(out, want[2000..], "from the middle of a slice, across the slices after it");
        arena.pages().read(b0, 6000, &mut out);
        assert_eq!(out, (1..3000u32).step_by(2).flat_map(u32::to_le_bytes).collect::<Vec<_>>());
        arena.pages().read(a0, (want.len() + 3 * MAX_PAGE) as u32, &mut out);
        assert_eq!(&out[..want.len()], &want[..]);
        assert!(out[want.len()..].iter().all(|&x| x == 7) && out.len() == want.len() + 3 * MAX_PAGE);
    }
}
