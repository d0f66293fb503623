//! Batched reads for the `direct` backend: page-aligned buffers (O_DIRECT
//! wants the buffer, offset and length aligned) and one io_uring submission
//! for all the reads of a batch, so the device sees them together and in
//! offset order (WiSER's seed 004 scheduling). Where io_uring is unavailable
//! (an old kernel, a sandbox that forbids it) the batch is read with `pread`.
//!
//! Reads can also be sent ahead ([`submit_ahead`]) and not waited for: the
//! query goes on (scoring the block it has) while the device reads what it
//! will want next, and a later read of those pages waits only if they have
//! not arrived ([`wait_for`]). Each thread has its own ring; a read sent
//! ahead belongs to the thread that sent it, which keeps its buffer until the
//! kernel is done with it, and hands the bytes to the read's `landed`
//! callback (the application cache) when it is reaped.

use std::alloc::{self, Layout};
use std::cell::RefCell;
use std::io;
use std::ops::Range;
use std::os::fd::RawFd;

use io_uring::{cqueue, opcode, types, IoUring};

use crate::page_cache::PAGE;

/// Submission queue entries per ring; a larger batch goes in rounds.
const RING_ENTRIES: u32 = 64;

/// Reads sent ahead and not reaped, at most, per thread, and their bytes:
/// with a round of a batch they stay within the completion queue (twice the
/// submission queue), and the buffers they hold stay small beside the cache.
const AHEAD_SLOTS: usize = 32;
const AHEAD_BYTES: usize = 4 << 20;

/// Marks the user data of a read sent ahead (the rest is its slot).
const AHEAD_TAG: u64 = 1 << 63;

thread_local! {
    static URING: RefCell<Option<Uring>> = RefCell::new(IoUring::new(RING_ENTRIES).ok().map(Uring::new));
}

/// What to do with the bytes of a read sent ahead once they are in: the
/// bytes read (fewer than asked at the end of the file). Not called when the
/// read fails: the read that wants the pages then reads them itself and
/// reports the error.
pub type Landed = Box<dyn FnOnce(&[u8])>;

/// A read sent ahead: its buffer lives here until the kernel is done with it.
struct Flight {
    file: u64,
    pages: Range<u64>,
    buf: AlignedBuf,
    landed: Landed,
}

/// This thread's ring and the reads it has sent ahead.
struct Uring {
    ring: IoUring,
    flights: Vec<Option<Flight>>,
    flight_bytes: usize,
}

impl Uring {
    fn new(ring: IoUring) -> Self {
        Uring { ring, flights: Vec::new(), flight_bytes: 0 }
    }

    fn in_flight(&self) -> usize {
        self.flights.iter().filter(|f| f.is_some()).count()
    }

    /// Handles one completion: a read sent ahead lands (its slot freed);
    /// a read of the current batch (`got`, `failed`) is noted.
    fn complete(&mut self, c: cqueue::Entry, got: &mut [usize], failed: &mut Option<io::Error>) -> bool {
        let data = c.user_data();
        if data & AHEAD_TAG == 0 {
            match (c.result(), got.get_mut(data as usize)) {
                (r, _) if r < 0 => *failed = failed.take().or(Some(io::Error::from_raw_os_error(-r))),
                (r, Some(n)) => *n = r as usize,
                // Not of a batch waited for here (none is left unwaited): nothing to note.
                (_, None) => {}
            }
            return true;
        }
        let Some(flight) = self.flights.get_mut((data & !AHEAD_TAG) as usize).and_then(Option::take) else {
            return false;
        };
        self.flight_bytes -= flight.buf.len;
        if c.result() >= 0 {
            let n = (c.result() as usize).min(flight.buf.len);
            (flight.landed)(&flight.buf.as_slice()[..n]);
        }
        false
    }

    /// Handles the completions already in; returns how many were of the current batch.
    fn reap(&mut self, got: &mut [usize], failed: &mut Option<io::Error>) -> usize {
        let mut ours = 0;
        // One entry at a time: the queue's head moves on as each is taken.
        loop {
            let Some(c) = self.ring.completion().next() else { break };
            ours += usize::from(self.complete(c, got, failed));
        }
        ours
    }

    /// Waits for one completion at least and handles what is in.
    fn wait_one(&mut self) -> io::Result<()> {
        match self.ring.submit_and_wait(1) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
            Ok(_) => {
                self.reap(&mut [], &mut None);
                Ok(())
            }
        }
    }

    /// Waits for reads sent ahead to land until one of `len` bytes more fits
    /// the limits; false when the ring fails meanwhile.
    fn make_room(&mut self, len: usize) -> bool {
        while self.in_flight() > 0
            && (self.in_flight() >= AHEAD_SLOTS || self.flight_bytes + len > AHEAD_BYTES)
        {
            if self.wait_one().is_err() {
                return false;
            }
        }
        true
    }

    /// Queues a read of `pages` into a buffer kept in a free slot (not yet submitted).
    fn push_ahead(&mut self, fd: RawFd, file: u64, pages: Range<u64>, landed: Landed) -> bool {
        let mut buf = AlignedBuf::zeroed((pages.end - pages.start) as usize * PAGE);
        let slot = self.flights.iter().position(Option::is_none).unwrap_or(self.flights.len());
        let slice = buf.as_mut_slice();
        let entry = opcode::Read::new(types::Fd(fd), slice.as_mut_ptr(), slice.len() as u32)
            .offset(pages.start * PAGE as u64)
            .build()
            .user_data(AHEAD_TAG | slot as u64);
        // SAFETY: the buffer is kept in the slot until the read completes
        // (reaped here, in a later call, or when the ring is dropped).
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return false;
        }
        self.flight_bytes += buf.len;
        let flight = Flight { file, pages, buf, landed };
        match self.flights.get_mut(slot) {
            Some(free) => *free = Some(flight),
            None => self.flights.push(Some(flight)),
        }
        true
    }

    fn overlaps(&self, file: u64, pages: &Range<u64>) -> bool {
        self.flights
            .iter()
            .flatten()
            .any(|f| f.file == file && f.pages.start < pages.end && pages.start < f.pages.end)
    }
}

impl Drop for Uring {
    /// The kernel may still write into the buffers of reads sent ahead: wait for them.
    fn drop(&mut self) {
        while self.in_flight() > 0 && self.wait_one().is_ok() {}
        if self.in_flight() > 0 {
            // The ring failed: leak the buffers rather than free memory the kernel may write.
            std::mem::forget(std::mem::take(&mut self.flights));
        }
    }
}

/// A heap buffer aligned to a page, for O_DIRECT.
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is owned memory, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// `len` zeroed bytes (rounded up to whole pages).
    pub fn zeroed(len: usize) -> Self {
        let len = len.div_ceil(PAGE).max(1) * PAGE;
        let layout = Layout::from_size_align(len, PAGE).expect("page-aligned layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(ptr).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` holds `len` initialized (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed mutably through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, PAGE).expect("page-aligned layout");
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}

/// Reads `bufs[i]` from `offsets[i]` of `fd`, all submitted at once; returns
/// the bytes each read got (fewer than asked only at the end of the file).
pub fn read_batch(fd: RawFd, offsets: &[u64], bufs: &mut [AlignedBuf]) -> io::Result<Vec<usize>> {
    let mut got = vec![0usize; bufs.len()];
    let done = URING.with(|uring| -> io::Result<bool> {
        let mut uring = uring.borrow_mut();
        let Some(uring) = uring.as_mut() else { return Ok(false) };
        for start in (0..bufs.len()).step_by(RING_ENTRIES as usize) {
            let end = (start + RING_ENTRIES as usize).min(bufs.len());
            submit_round(uring, fd, &offsets[start..end], &mut bufs[start..end], &mut got[start..end])?;
        }
        Ok(true)
    })?;
    if !done {
        for ((buf, &offset), n) in bufs.iter_mut().zip(offsets).zip(&mut got) {
            *n = pread_full(fd, buf.as_mut_slice(), offset)?;
        }
    }
    Ok(got)
}

fn submit_round(
    uring: &mut Uring,
    fd: RawFd,
    offsets: &[u64],
    bufs: &mut [AlignedBuf],
    got: &mut [usize],
) -> io::Result<()> {
    for (i, (buf, &offset)) in bufs.iter_mut().zip(offsets).enumerate() {
        let slice = buf.as_mut_slice();
        let entry = opcode::Read::new(types::Fd(fd), slice.as_mut_ptr(), slice.len() as u32)
            .offset(offset)
            .build()
            .user_data(i as u64);
        // SAFETY: each buffer outlives the submission: this function waits for
        // every completion before it returns, and the buffers are borrowed until then.
        unsafe { uring.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring queue full"))?;
    }
    // Every read is waited for, failed or not, so none still targets a buffer on return;
    // all at once (one wake-up for the batch, not one per read, which cost a
    // task switch each). Reads sent ahead that complete meanwhile land too.
    let mut pending = bufs.len();
    let mut failed = None;
    while pending > 0 {
        match uring.ring.submit_and_wait(pending) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => other?,
        };
        pending -= uring.reap(got, &mut failed);
    }
    if let Some(e) = failed {
        return Err(e);
    }
    // A short read before the end of the file (rare) is finished with pread.
    for ((buf, &offset), n) in bufs.iter_mut().zip(offsets).zip(got.iter_mut()) {
        let slice = buf.as_mut_slice();
        if *n > 0 && *n < slice.len() && *n % PAGE == 0 {
            *n += pread_full(fd, &mut slice[*n..], offset + *n as u64)?;
        }
    }
    Ok(())
}

/// Sends reads of `runs` of pages of `fd` (the file `file`) ahead, all in one
/// submission, not waiting for them; each run's `landed` gets its bytes when
/// it is reaped. Returns the runs it did not send, the tail of `runs` (this
/// thread has no ring, or the ring failed): the caller reads those itself.
/// When too much is in flight, waits for earlier reads to land first.
pub fn submit_ahead(fd: RawFd, file: u64, runs: Vec<(Range<u64>, Landed)>) -> Vec<Range<u64>> {
    URING.with(|uring| {
        let mut uring = uring.borrow_mut();
        let Some(uring) = uring.as_mut() else { return runs.into_iter().map(|(p, _)| p).collect() };
        uring.reap(&mut [], &mut None);
        let mut left = Vec::new();
        for (pages, landed) in runs {
            let len = (pages.end - pages.start) as usize * PAGE;
            if !left.is_empty() || !uring.make_room(len) || !uring.push_ahead(fd, file, pages.clone(), landed)
            {
                left.push(pages);
            }
        }
        // Not submitted now, the entries would go with the next wait; a
        // failure is the device's to report when the pages are read.
        let _ = uring.ring.submit();
        left
    })
}

/// Drops from `pages` (of `file`) those a read sent ahead by this thread covers.
pub fn drop_in_flight(file: u64, pages: &mut Vec<u64>) {
    URING.with(|uring| {
        if let Some(u) = uring.borrow().as_ref().filter(|u| u.in_flight() > 0) {
            pages.retain(|&p| !u.overlaps(file, &(p..p + 1)));
        }
    })
}

/// Waits until no read this thread sent ahead covers any of `pages` of
/// `file` (they have landed); true when it had to wait for the device.
pub fn wait_for(file: u64, pages: Range<u64>) -> bool {
    URING.with(|uring| {
        let mut uring = uring.borrow_mut();
        let Some(uring) = uring.as_mut().filter(|u| u.in_flight() > 0) else { return false };
        uring.reap(&mut [], &mut None);
        let mut waited = false;
        while uring.overlaps(file, &pages) {
            waited = true;
            if uring.wait_one().is_err() {
                break;
            }
        }
        waited
    })
}

/// Reads into `buf` from `offset` until it is full or the file ends.
fn pread_full(fd: RawFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: the pointer and length describe the unfilled part of `buf`.
        let n = unsafe {
            libc::pread(fd, buf[done..].as_mut_ptr().cast(), buf.len() - done, (offset + done as u64) as i64)
        };
        match n {
            0 => break,
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            n => done += n as usize,
        }
    }
    Ok(done)
}
#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;

    use super::*;

    #[test]
    fn batch_reads_every_range_and_stops_at_the_end_of_the_file() {
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..3 * PAGE + 100).map(|i| (i % 251) as u8).collect();
        f.write_all(&data).unwrap();
        let mut bufs: Vec<AlignedBuf> = (0..3).map(|_| AlignedBuf::zeroed(PAGE)).collect();
        let offsets = [2 * PAGE as u64, 0, 3 * PAGE as u64];
        let got = read_batch(f.as_raw_fd(), &offsets, &mut bufs).unwrap();
        assert_eq!(got, vec![PAGE, PAGE, 100]);
        assert_eq!(bufs[0].as_slice(), &data[2 * PAGE..3 * PAGE]);
        assert_eq!(bufs[1].as_slice(), &data[..PAGE]);
        assert_eq!(&bufs[2].as_slice()[..100], &data[3 * PAGE..]);
    }

    #[test]
    fn reads_sent_ahead_land_once_waited_for_and_batches_go_on_beside_them() {
        use std::cell::RefCell;
        use std::rc::Rc;

        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..40 * PAGE + 7).map(|i| (i % 253) as u8).collect();
        f.write_all(&data).unwrap();
        type Log = Rc<RefCell<Vec<(u64, Vec<u8>)>>>;
        let landed: Log = Rc::default();
        let runs: Vec<(Range<u64>, Landed)> = [0u64, 8, 16, 38]
            .into_iter()
            .map(|first| {
                let sink = landed.clone();
                let run = first..(first + 8).min(41);
                (run, Box::new(move |b: &[u8]| sink.borrow_mut().push((first, b.to_vec()))) as Landed)
            })
            .collect();
        let left = submit_ahead(f.as_raw_fd(), 9, runs);
        if !left.is_empty() {
            assert_eq!(left.len(), 4, "all or nothing when the ring is there or not");
            return; // no io_uring here: callers read the pages themselves
        }
        let sent = [0u64..8, 8..16, 16..24, 38..41];
        let in_flight = |file: u64, page: u64| {
            let mut pages = vec![page];
            drop_in_flight(file, &mut pages);
            pages.is_empty()
        };
        assert!(in_flight(9, 17) || landed.borrow().iter().any(|(p, _)| *p == 16));
        assert!(!in_flight(10, 17), "another file's page");
        // A batch read meanwhile gets its own bytes.
        let mut bufs = vec![AlignedBuf::zeroed(PAGE)];
        assert_eq!(read_batch(f.as_raw_fd(), &[24 * PAGE as u64], &mut bufs).unwrap(), vec![PAGE]);
        assert_eq!(bufs[0].as_slice(), &data[24 * PAGE..25 * PAGE]);
        for pages in &sent {
            wait_for(9, pages.clone());
            assert!(!in_flight(9, pages.start));
        }
        let mut got = landed.borrow().clone();
        got.sort();
        assert_eq!(got.len(), sent.len());
        for (first, bytes) in got {
            let at = first as usize * PAGE;
            let end = (at + 8 * PAGE).min(data.len());
            assert_eq!(bytes, &data[at..end], "pages from {first}, the last cut at the end of the file");
        }
        assert!(!wait_for(9, 0..41), "nothing left to wait for");
    }
}
