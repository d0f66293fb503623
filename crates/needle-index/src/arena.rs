//! An append-only byte arena that an in-memory segment's writer fills while
//! its readers read what was there when they looked.
//!
//! Every term's postings live here as bytes (see `mem_postings`), so a term
//! costs no allocation of its own: a segment of a few hundred thousand terms
//! would otherwise make as many small vectors, most of them a posting or two.
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

type Page = Arc<[AtomicU8]>;

/// Where a run of bytes starts: a page and a byte in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Addr {
    page: u32,
    at: u32,
}

/// A run of bytes that grows: `len` written of `cap` reserved at `addr`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Region {
    pub addr: Addr,
    pub len: u32,
    pub cap: u32,
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

    /// A region with room for `cap` bytes.
    pub fn region(&mut self, cap: usize) -> Region {
        Region { addr: self.alloc(cap), len: 0, cap: cap as u32 }
    }

    /// Makes room for `more` bytes after `r`'s: a region that outgrows its
    /// room moves to one twice as large (readers of the old one keep reading it).
    pub fn reserve(&mut self, r: &mut Region, more: usize) {
        let need = r.len as usize + more;
        if need <= r.cap as usize {
            return;
        }
        let cap = need.max(2 * r.cap as usize);
        let addr = self.alloc(cap);
        let (from, to) = (&self.pages[r.addr.page as usize], &self.pages[addr.page as usize]);
        let (from, to) = (&from[r.addr.at as usize..], &to[addr.at as usize..]);
        for (t, f) in to.iter().zip(&from[..r.len as usize]) {
            t.store(f.load(Relaxed), Relaxed);
        }
        (r.addr, r.cap) = (addr, cap as u32);
    }

    /// Appends `bytes` to `r`, which has room for them ([`Arena::reserve`]).
    pub fn put(&self, r: &mut Region, bytes: &[u8]) {
        debug_assert!(r.len as usize + bytes.len() <= r.cap as usize, "reserved first");
        let at = (r.addr.at + r.len) as usize;
        let page = &self.pages[r.addr.page as usize][at..at + bytes.len()];
        for (t, &b) in page.iter().zip(bytes) {
            t.store(b, Relaxed);
        }
        r.len += bytes.len() as u32;
    }
}

/// A reader's handle on the pages: cheap to clone, and it keeps them alive.
#[derive(Clone, Default)]
pub(crate) struct Pages(Arc<Vec<Page>>);

impl Pages {
    /// Replaces `out` with the `len` bytes at `addr`, which were written
    /// before this reader learnt of them.
    pub fn read(&self, addr: Addr, len: u32, out: &mut Vec<u8>) {
        out.clear();
        let at = addr.at as usize;
        let bytes = &self.0[addr.page as usize][at..at + len as usize];
        out.extend(bytes.iter().map(|b| b.load(Relaxed)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_grow_without_changing_what_a_reader_holds() {
        let mut arena = Arena::default();
        let mut a = arena.region(4);
        let mut b = arena.region(4);
        for i in 0..3000u32 {
            let bytes = i.to_le_bytes();
            let r = if i % 2 == 0 { &mut a } else { &mut b };
            arena.reserve(r, 4);
            arena.put(r, &bytes);
        }
        let held = (arena.pages(), a);
        // Past the first page, and past the largest page: a region of its own size.
        arena.reserve(&mut a, 3 * MAX_PAGE);
        arena.put(&mut a, &vec![7; 3 * MAX_PAGE]);
        let mut out = Vec::new();
        held.0.read(held.1.addr, held.1.len, &mut out);
        let want: Vec<u8> = (0..3000u32).step_by(2).flat_map(u32::to_le_bytes).collect();
        assert_eq!(out, want, "the old region, read through the old pages");
        arena.pages().read(b.addr, b.len, &mut out);
        assert_eq!(out, (1..3000u32).step_by(2).flat_map(u32::to_le_bytes).collect::<Vec<_>>());
        arena.pages().read(a.addr, a.len, &mut out);
        assert_eq!(&out[..want.len()], &want[..]);
        assert!(out[want.len()..].iter().all(|&x| x == 7) && out.len() == want.len() + 3 * MAX_PAGE);
        assert!(arena.bytes() >= out.len() + b.cap as usize);
    }
}
