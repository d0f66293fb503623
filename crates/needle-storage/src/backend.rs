//! How index files are read: the storage backends behind [`crate::FileSlice`].
//!
//! - `mmap` (the default): the file is mapped with MADV_RANDOM; the kernel's
//!   page cache holds what queries read, and the adaptive prefetch asks it
//!   for long ranges ahead (MADV_WILLNEED).
//! - `pread`: each range a reader asks for is read with `pread` into a buffer
//!   of its own, through the application cache when there is one (the kernel's
//!   page cache still sees the reads).
//! - `direct`: the file is opened with O_DIRECT, so the kernel's page cache
//!   holds none of it, and whole 4 KiB pages are read through io_uring into
//!   the application cache ([`crate::page_cache`]): the memory a query uses is
//!   the budget given, and nothing else. A file system that refuses O_DIRECT
//!   (tmpfs) is read with buffered reads the same way.
//!
//! Every backend returns the same bytes; they differ in what they keep in memory and how they ask the device.

use std::fs::{File, OpenOptions};
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use needle_core::{Error, Result};

use crate::counters;
use crate::page_cache::{copy_page, page_span, runs, PageCache, PAGE};
use crate::uring::{self, AlignedBuf};

/// Which way index files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    #[default]
    Mmap,
    Pread,
    Direct,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Mmap, Backend::Pread, Backend::Direct];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Mmap => "mmap",
            Backend::Pread => "pread",
            Backend::Direct => "direct",
        }
    }
}

impl FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("unknown storage backend {s:?} (expected mmap, pread or direct)"))
    }
}

/// How a directory's files are read: the backend, and the application
/// cache the `pread` and `direct` backends read through (none: every read
/// goes to the file; `direct` then reads whole pages for each request).
#[derive(Clone, Default)]
pub struct ReadOptions {
    pub backend: Backend,
    pub cache: Option<Arc<PageCache>>,
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cache = if self.cache.is_some() { "with" } else { "without" };
        write!(f, "ReadOptions({}, {cache} an application cache)", self.backend.name())
    }
}

impl ReadOptions {
    /// `backend` with an application cache of `cache_bytes` (0: none).
    pub fn new(backend: Backend, cache_bytes: usize) -> Result<Self> {
        let cache = match cache_bytes {
            0 => None,
            n => Some(Arc::new(PageCache::new(n)?)),
        };
        Ok(ReadOptions { backend, cache })
    }
}

/// Keys files in the page cache: never reused within a process.
static NEXT_FILE_ID: AtomicU64 = AtomicU64::new(1);

/// An open file read with `pread` or direct I/O.
pub(crate) struct FileSource {
    file: File,
    path: PathBuf,
    len: usize,
    /// Reads whole pages through the batch reader (the `direct` backend, even where O_DIRECT is refused).
    paged: bool,
    id: u64,
    cache: Option<Arc<PageCache>>,
}

impl FileSource {
    pub fn open(path: &Path, options: &ReadOptions) -> Result<FileSource> {
        let paged = options.backend == Backend::Direct;
        let file = match paged {
            true => open_direct(path)?,
            false => File::open(path).map_err(|e| Error::io(path, e))?,
        };
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len() as usize;
        let id = NEXT_FILE_ID.fetch_add(1, Ordering::Relaxed);
        Ok(FileSource { file, path: path.to_path_buf(), len, paged, id, cache: options.cache.clone() })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The bytes of `range` (absolute, within the file), through the cache
    /// when `keep` is set (pages read are kept), straight from the file otherwise.
    pub fn read(&self, range: Range<usize>, keep: bool) -> Result<Vec<u8>> {
        let mut out = vec![0u8; range.len()];
        if range.is_empty() {
            return Ok(out);
        }
        // A read once (a checksum pass) goes around the cache, counted in none of its figures.
        let missing: Vec<u64> = match self.cache.as_ref().filter(|_| keep) {
            Some(cache) => {
                if self.paged && uring::wait_for(self.id, page_span(&range)) {
                    counters::record_wait();
                }
                let missing = cache.copy_cached(self.id, &range, &mut out);
                let pages = page_span(&range).count();
                counters::record_cache(pages - missing.len(), missing.len());
                missing
            }
            None if !self.paged => {
                counters::record_storage(1, range.len());
                self.file.read_exact_at(&mut out, range.start as u64).map_err(|e| self.error(e))?;
                return Ok(out);
            }
            None => page_span(&range).collect(),
        };
        self.read_pages(&runs(&missing), keep, |page, bytes| copy_page(page, bytes, &range, &mut out))?;
        Ok(out)
    }

    /// Asks for the pages of `ranges` that are not cached to be read into
    /// the cache: now, in one batch waited for at once, or `in_background`:
    /// sent ahead without waiting (`direct`, in runs of at most
    /// [`AHEAD_RUN_PAGES`], so a reader waits only for the run it is in;
    /// `pread`, or where io_uring is unavailable, reads them now all the
    /// same). False when there is no cache to read into.
    pub fn prefetch(&self, ranges: &[Range<usize>], in_background: bool) -> bool {
        let Some(cache) = &self.cache else { return false };
        let mut missing = cache.absent(self.id, &pages_of(ranges));
        if self.paged {
            uring::drop_in_flight(self.id, &mut missing);
        }
        let mut runs = runs(&missing);
        if in_background && self.paged {
            let split: Vec<Range<u64>> = runs.into_iter().flat_map(|r| split(r, AHEAD_RUN_PAGES)).collect();
            let ahead = split.iter().map(|r| (r.clone(), self.landing(cache, r.clone()))).collect();
            runs = uring::submit_ahead(self.file.as_raw_fd(), self.id, ahead);
            let sent = &split[..split.len() - runs.len()]; // what was not sent is the tail
            counters::record_storage_ahead(sent.len(), sent.iter().map(|r| self.page_bytes(r.clone())).sum());
        }
        // A hint: a failed read is left for the query's own read to report.
        let _ = self.read_pages(&runs, true, |_, _| {});
        true
    }

    /// Where the bytes of `pages` go once a read sent ahead brings them:
    /// into `cache`, each page that came whole.
    fn landing(&self, cache: &Arc<PageCache>, pages: Range<u64>) -> uring::Landed {
        let (cache, id, len) = (Arc::clone(cache), self.id, self.len);
        Box::new(move |bytes: &[u8]| {
            for page in pages.clone() {
                let at = (page - pages.start) as usize * PAGE;
                let want = bytes_on(len, page..page + 1);
                if want > 0 && at + want <= bytes.len() {
                    cache.insert(id, page, &bytes[at..at + want]);
                }
            }
        })
    }

    /// Pins the pages of `ranges` in the cache's static part, reading those
    /// not cached; returns how many are pinned (0 without a cache).
    pub fn pin(&self, ranges: &[Range<usize>]) -> Result<usize> {
        let Some(cache) = &self.cache else { return Ok(0) };
        let (mut pinned, mut missing) = (0, Vec::new());
        for page in pages_of(ranges) {
            match cache.pin(self.id, page, None) {
                true => pinned += 1,
                false => missing.push(page),
            }
        }
        self.read_pages(&runs(&missing), false, |page, bytes| {
            pinned += usize::from(cache.pin(self.id, page, Some(bytes)))
        })?;
        Ok(pinned)
    }

    /// Reads `runs` of pages (each run in one request, all submitted at
    /// once), keeps them in the cache when `keep` is set, and shows each
    /// page's bytes to `visit`.
    fn read_pages(&self, runs: &[Range<u64>], keep: bool, mut visit: impl FnMut(u64, &[u8])) -> Result<()> {
        if runs.is_empty() {
            return Ok(());
        }
        let wanted: Vec<usize> = runs.iter().map(|r| self.page_bytes(r.start..r.end)).collect();
        let bytes: usize = wanted.iter().sum();
        counters::record_storage(runs.len(), bytes);
        let mut bufs: Vec<AlignedBuf> =
            runs.iter().map(|r| AlignedBuf::zeroed((r.end - r.start) as usize * PAGE)).collect();
        let offsets: Vec<u64> = runs.iter().map(|r| r.start * PAGE as u64).collect();
        let got = if self.paged {
            uring::read_batch(self.file.as_raw_fd(), &offsets, &mut bufs)
        } else {
            self.pread_runs(&offsets, &wanted, &mut bufs)
        };
        let got = got.map_err(|e| self.error(e))?;
        for ((run, buf), (&got, &want)) in runs.iter().zip(&bufs).zip(got.iter().zip(&wanted)) {
            if got < want {
                let e = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "file shorter than it was");
                return Err(self.error(e));
            }
            for (i, page) in (run.start..run.end).enumerate() {
                let len = self.page_bytes(page..page + 1);
                let bytes = &buf.as_slice()[i * PAGE..i * PAGE + len];
                if let Some(cache) = self.cache.as_ref().filter(|_| keep) {
                    cache.insert(self.id, page, bytes);
                }
                visit(page, bytes);
            }
        }
        Ok(())
    }

    fn pread_runs(
        &self,
        offsets: &[u64],
        wanted: &[usize],
        bufs: &mut [AlignedBuf],
    ) -> std::io::Result<Vec<usize>> {
        let mut got = Vec::with_capacity(bufs.len());
        for ((buf, &offset), &want) in bufs.iter_mut().zip(offsets).zip(wanted) {
            self.file.read_exact_at(&mut buf.as_mut_slice()[..want], offset)?;
            got.push(want);
        }
        Ok(got)
    }

    /// Bytes of the file on `pages` (the last page may be partial).
    fn page_bytes(&self, pages: Range<u64>) -> usize {
        bytes_on(self.len, pages)
    }

    fn error(&self, e: std::io::Error) -> Error {
        Error::io(&self.path, e)
    }
}

/// Opens `path` with O_DIRECT; a file system that refuses it (tmpfs) gives
/// a plain file, read page by page with buffered reads all the same.
fn open_direct(path: &Path) -> Result<File> {
    match OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path) {
        Ok(file) => Ok(file),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => File::open(path).map_err(|e| Error::io(path, e)),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Bytes of a file of `len` bytes on `pages` (the last page may be partial).
fn bytes_on(len: usize, pages: Range<u64>) -> usize {
    let end = (pages.end as usize * PAGE).min(len);
    end.saturating_sub(pages.start as usize * PAGE)
}

/// Pages a read sent ahead asks for at most: a reader waits for the whole
/// run its block is in, so a long window goes as several runs, all at once.
const AHEAD_RUN_PAGES: u64 = 16;

/// `run` cut into runs of at most `most` pages.
fn split(run: Range<u64>, most: u64) -> impl Iterator<Item = Range<u64>> {
    (run.start..run.end).step_by(most as usize).map(move |s| s..(s + most).min(run.end))
}

/// The pages `ranges` lie on, sorted, each once.
fn pages_of(ranges: &[Range<usize>]) -> Vec<u64> {
    let mut pages: Vec<u64> = ranges.iter().flat_map(page_span).collect();
    pages.sort_unstable();
    pages.dedup();
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_are_split() {
        assert_eq!(split(3..40, 16).collect::<Vec<_>>(), vec![3..19, 19..35, 35..40]);
        assert_eq!(split(5..6, 16).collect::<Vec<_>>(), vec![5..6]);
    }

    #[test]
    fn backends_parse_by_name() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>(), Ok(b));
        }
        assert!("mmapp".parse::<Backend>().unwrap_err().contains("mmapp"));
    }
}
