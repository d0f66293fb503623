//! A cheap, cloneable view of a byte range of an open file (or of memory).

use std::ops::Range;
use std::sync::Arc;

use memmap2::{Advice, Mmap};

enum Backing {
    Mapped(Mmap),
    Heap(Vec<u8>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Heap(v) => v,
        }
    }
}

/// A range of a named file. Cloning shares the mapping.
#[derive(Clone)]
pub struct FileSlice {
    name: Arc<str>,
    backing: Arc<Backing>,
    range: Range<usize>,
}

impl std::fmt::Debug for FileSlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileSlice({}, {:?})", self.name, self.range)
    }
}

impl FileSlice {
    pub(crate) fn mapped(name: &str, map: Mmap) -> Self {
        let len = map.len();
        FileSlice { name: name.into(), backing: Arc::new(Backing::Mapped(map)), range: 0..len }
    }

    /// A slice over bytes held in memory, named like a file (for tests and in-memory segments).
    pub fn from_vec(name: &str, bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        FileSlice { name: name.into(), backing: Arc::new(Backing::Heap(bytes)), range: 0..len }
    }

    /// The file's name, used in every error about its contents.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn len(&self) -> usize {
        self.range.len()
    }

    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// (an id of the underlying file, the absolute offset in it) of `offset` in this slice.
    pub fn position(&self, offset: usize) -> (usize, u64) {
        (Arc::as_ptr(&self.backing) as usize, (self.range.start + offset) as u64)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.backing.bytes()[self.range.clone()]
    }

    /// Asks the kernel to read `range` (relative to this slice, clamped to it)
    /// ahead, asynchronously; a hint, so failures are ignored. Counted as prefetched bytes.
    pub fn will_need(&self, range: Range<usize>) {
        let end = range.end.min(self.len());
        if range.start >= end {
            return;
        }
        if let Backing::Mapped(map) = self.backing.as_ref() {
            let _ = map.advise_range(Advice::WillNeed, self.range.start + range.start, end - range.start);
            crate::counters::record_prefetch(end - range.start);
        }
    }

    /// A sub-range, relative to this slice. Panics if out of range: callers
    /// check lengths read from files before slicing (see the codecs' readers).
    pub fn slice(&self, range: Range<usize>) -> FileSlice {
        assert!(range.start <= range.end && range.end <= self.len(), "slice out of range");
        let start = self.range.start;
        FileSlice {
            name: self.name.clone(),
            backing: self.backing.clone(),
            range: start + range.start..start + range.end,
        }
    }
}
