//! A cheap, cloneable view of a byte range of an open file (or of memory),
//! and the bytes read from it.
//!
//! Readers ask a [`FileSlice`] for exactly the ranges they decode
//! ([`FileSlice::read`]); how the bytes arrive is the backend's business
//! (see [`crate::backend`]): a view of the mapping, or a buffer filled by
//! `pread` or by direct I/O through the application cache.

use std::ops::{Deref, Range};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use memmap2::{Advice, Mmap};
use needle_core::{Error, Result};

use crate::backend::FileSource;
use crate::page_cache::{runs, PAGE};

/// Bytes in memory: a mapping (with what its residency checks found) or a heap buffer.
pub(crate) enum Memory {
    Mapped(Mmap, Residency),
    Heap(Vec<u8>),
}

impl Deref for Memory {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Memory::Mapped(m, _) => m,
            Memory::Heap(v) => v,
        }
    }
}

/// How far a mapping's residency checks (see [`will_need_absent`]) are
/// trusted. After `TRUST_AFTER` checks in a row found every page asked for
/// in memory, the next asks are taken on trust: 2 of them, then twice as
/// many after each further such check, up to 64. A check finding a page out
/// of memory starts over. An index held in memory so pays for a `mincore`
/// once in 64 asks (it was a sixth of a served search's CPU); one that does
/// not fit keeps checking, and prefetching, every time.
#[derive(Default)]
pub(crate) struct Residency {
    /// Asks still to be taken on trust.
    skip: AtomicU32,
    /// Checks in a row that found everything in memory.
    streak: AtomicU32,
}

const TRUST_AFTER: u32 = 4;

impl Residency {
    /// Whether this ask must be checked. (Racy by design: a lost update
    /// only changes how many asks are skipped.)
    fn must_check(&self) -> bool {
        let skip = self.skip.load(Ordering::Relaxed);
        if skip == 0 {
            return true;
        }
        self.skip.store(skip - 1, Ordering::Relaxed);
        false
    }

    fn checked(&self, all_resident: bool) {
        let streak =
            if all_resident { (self.streak.load(Ordering::Relaxed) + 1).min(TRUST_AFTER + 5) } else { 0 };
        self.streak.store(streak, Ordering::Relaxed);
        let skip = if streak >= TRUST_AFTER { 2 << (streak - TRUST_AFTER) } else { 0 };
        self.skip.store(skip, Ordering::Relaxed);
    }
}

#[derive(Clone)]
enum Source {
    Memory(Arc<Memory>),
    File(Arc<FileSource>),
}

/// A range of a named file. Cloning shares the file.
#[derive(Clone)]
pub struct FileSlice {
    name: Arc<str>,
    source: Source,
    range: Range<usize>,
}

impl std::fmt::Debug for FileSlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileSlice({}, {:?})", self.name, self.range)
    }
}

/// Bytes read from a [`FileSlice`]: a view of its mapping, or a buffer of
/// their own. Cloning shares them.
#[derive(Clone)]
pub struct ReadBytes {
    memory: Arc<Memory>,
    range: Range<usize>,
}

impl ReadBytes {
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        ReadBytes { memory: Arc::new(Memory::Heap(bytes)), range: 0..len }
    }
}

impl std::fmt::Debug for ReadBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadBytes({} bytes)", self.range.len())
    }
}

impl Deref for ReadBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.memory[self.range.clone()]
    }
}

impl AsRef<[u8]> for ReadBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl FileSlice {
    pub(crate) fn mapped(name: &str, map: Mmap) -> Self {
        let len = map.len();
        FileSlice {
            name: name.into(),
            source: Source::Memory(Arc::new(Memory::Mapped(map, Residency::default()))),
            range: 0..len,
        }
    }

    pub(crate) fn file(name: &str, file: FileSource) -> Self {
        let len = file.len();
        FileSlice { name: name.into(), source: Source::File(Arc::new(file)), range: 0..len }
    }

    /// A slice over bytes held in memory, named like a file (for tests and in-memory segments).
    pub fn from_vec(name: &str, bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        FileSlice { name: name.into(), source: Source::Memory(Arc::new(Memory::Heap(bytes))), range: 0..len }
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
        let id = match &self.source {
            Source::Memory(m) => Arc::as_ptr(m) as *const u8 as usize,
            Source::File(f) => Arc::as_ptr(f) as *const u8 as usize,
        };
        (id, (self.range.start + offset) as u64)
    }

    /// The bytes of `range` (relative to this slice). A range past the
    /// slice's end is an error naming the file, as is a failed or short read.
    pub fn read(&self, range: Range<usize>) -> Result<ReadBytes> {
        self.read_keeping(range, true)
    }

    /// [`FileSlice::read`] for bytes read once (a checksum pass): what is read
    /// from the file is not kept in the application cache, so it does not
    /// push out what queries use.
    pub fn read_once(&self, range: Range<usize>) -> Result<ReadBytes> {
        self.read_keeping(range, false)
    }

    fn read_keeping(&self, range: Range<usize>, keep: bool) -> Result<ReadBytes> {
        if range.start > range.end || range.end > self.len() {
            return Err(Error::corrupt(
                self.name(),
                format!("read of bytes {range:?} past the end ({} bytes)", self.len()),
            ));
        }
        let absolute = self.range.start + range.start..self.range.start + range.end;
        crate::faults::check(crate::faults::Op::Read, std::path::Path::new(self.name()))
            .map_err(|e| Error::io(self.name(), e))?;
        match &self.source {
            Source::Memory(memory) => Ok(ReadBytes { memory: memory.clone(), range: absolute }),
            Source::File(file) => file.read(absolute, keep).map(ReadBytes::from_vec),
        }
    }

    /// The whole slice, read (for data kept whole in memory: norms, term
    /// maps), so not kept in the application cache as well.
    pub fn read_all(&self) -> Result<ReadBytes> {
        self.read_once(0..self.len())
    }

    /// Whether reads are views of memory (a mapping or a buffer), free to repeat.
    pub fn is_memory(&self) -> bool {
        matches!(self.source, Source::Memory(_))
    }

    /// Asks for `range` (relative to this slice, clamped to it) to be read
    /// ahead; see [`FileSlice::will_need_all`].
    pub fn will_need(&self, range: Range<usize>) {
        self.will_need_all(std::slice::from_ref(&range));
    }

    /// Asks for all of `ranges` (relative to this slice, clamped to it) to
    /// be read now, at once, so the device serves them together rather than
    /// one after another as readers reach them: the kernel reads a mapping's
    /// pages asynchronously (MADV_WILLNEED); a file read through the
    /// application cache has its missing pages read into it in one batch,
    /// waited for with one wake-up (for what a query needs next: its terms'
    /// first pages, its hits' documents). A hint, so failures are ignored.
    /// Counted as prefetched bytes.
    pub fn will_need_all(&self, ranges: &[Range<usize>]) {
        self.ask_ahead(ranges, false);
    }

    /// [`FileSlice::will_need_all`] for what a reader will want a little
    /// later (the next blocks of a list read in order): the `direct` backend
    /// sends the reads and goes on, and a later read waits only for the
    /// part it needs.
    pub fn read_ahead_all(&self, ranges: &[Range<usize>]) {
        self.ask_ahead(ranges, true);
    }

    fn ask_ahead(&self, ranges: &[Range<usize>], in_background: bool) {
        let absolute = self.clamped_in_file(ranges);
        let asked = match &self.source {
            Source::Memory(memory) => match memory.as_ref() {
                Memory::Mapped(map, residency) => {
                    if residency.must_check() {
                        let absent: usize = absolute.iter().map(|r| will_need_absent(map, r.clone())).sum();
                        residency.checked(absent == 0);
                    }
                    true
                }
                Memory::Heap(_) => false,
            },
            Source::File(file) => file.prefetch(&absolute, in_background),
        };
        if asked {
            crate::counters::record_prefetch(absolute.iter().map(|r| r.len()).sum());
        }
    }

    /// Pins the pages of `ranges` (relative to this slice) in the static
    /// part of the application cache, reading them now; returns the pages
    /// pinned (0 for a mapping or a file read without a cache).
    pub fn pin_all(&self, ranges: &[Range<usize>]) -> Result<usize> {
        let Source::File(file) = &self.source else { return Ok(0) };
        file.pin(&self.clamped_in_file(ranges))
    }

    /// `ranges` (relative to this slice) clamped to it, empty ones dropped, as offsets in the file.
    fn clamped_in_file(&self, ranges: &[Range<usize>]) -> Vec<Range<usize>> {
        ranges
            .iter()
            .map(|r| r.start..r.end.min(self.len()))
            .filter(|r| r.start < r.end)
            .map(|r| self.range.start + r.start..self.range.start + r.end)
            .collect()
    }

    /// A sub-range, relative to this slice. Panics if out of range: callers
    /// check lengths read from files before slicing (see the codecs' readers).
    pub fn slice(&self, range: Range<usize>) -> FileSlice {
        assert!(range.start <= range.end && range.end <= self.len(), "slice out of range");
        let start = self.range.start;
        FileSlice {
            name: self.name.clone(),
            source: self.source.clone(),
            range: start + range.start..start + range.end,
        }
    }
}

/// Asks the kernel to read the pages of `range` of `map` that are not in
/// memory, each run of them with one MADV_WILLNEED; returns how many there
/// were. Pages in memory are told apart with `mincore`, which answers from
/// the page tables for pages this process has mapped: advising them all
/// instead would cost a page-cache lookup per page, which for an index held
/// in memory was a fifth of the CPU of a disjunction.
fn will_need_absent(map: &Mmap, range: Range<usize>) -> usize {
    const CHUNK: usize = 256; // pages asked about per `mincore`
    let first = range.start / PAGE;
    let end = range.end.div_ceil(PAGE).min(map.len().div_ceil(PAGE));
    let mut resident = [0u8; CHUNK];
    let mut absent_pages = 0;
    for chunk in (first..end).step_by(CHUNK) {
        let pages = (end - chunk).min(CHUNK);
        // SAFETY: the address is page-aligned (a mapping starts on a page)
        // and the pages lie within the mapping; `resident` has a byte per page.
        let rc = unsafe {
            libc::mincore(
                map.as_ptr().add(chunk * PAGE) as *mut libc::c_void,
                pages * PAGE,
                resident.as_mut_ptr(),
            )
        };
        let absent: Vec<u64> =
            (0..pages).filter(|&i| rc != 0 || resident[i] & 1 == 0).map(|i| (chunk + i) as u64).collect();
        absent_pages += absent.len();
        for run in runs(&absent) {
            // A hint: a kernel that refuses it still serves correct reads.
            let at = run.start as usize * PAGE;
            let len = (run.end - run.start) as usize * PAGE;
            let _ = map.advise_range(Advice::WillNeed, at, len.min(map.len() - at));
        }
    }
    absent_pages
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many asks pass unchecked after one check found `all_resident`.
    fn skipped_after(r: &Residency, all_resident: bool) -> usize {
        r.checked(all_resident);
        let mut skipped = 0;
        while !r.must_check() {
            skipped += 1;
        }
        skipped
    }

    #[test]
    fn residency_is_trusted_only_after_checks_in_a_row_and_lost_at_the_first_absence() {
        let r = Residency::default();
        assert!(r.must_check());
        let first: Vec<usize> = (0..TRUST_AFTER + 7).map(|_| skipped_after(&r, true)).collect();
        assert_eq!(first, [0, 0, 0, 2, 4, 8, 16, 32, 64, 64, 64]);
        assert_eq!(skipped_after(&r, false), 0, "a page out of memory: every ask checked again");
        assert_eq!(skipped_after(&r, true), 0, "the streak starts over");
    }
}
