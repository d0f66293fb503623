//! Batched reads for the `direct` backend: page-aligned buffers (O_DIRECT
//! wants the buffer, offset and length aligned) and one io_uring submission
//! for all the reads of a batch, so the device sees them together and in
//! offset order (WiSER's seed 004 scheduling). Where io_uring is unavailable
//! (an old kernel, a sandbox that forbids it) the batch is read with `pread`.

use std::alloc::{self, Layout};
use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;

use io_uring::{opcode, types, IoUring};

use crate::page_cache::PAGE;

/// Submission queue entries per ring; a larger batch goes in rounds.
const RING_ENTRIES: u32 = 64;

thread_local! {
    static RING: RefCell<Option<IoUring>> = RefCell::new(IoUring::new(RING_ENTRIES).ok());
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
    let done = RING.with(|ring| -> io::Result<bool> {
        let mut ring = ring.borrow_mut();
        let Some(ring) = ring.as_mut() else { return Ok(false) };
        for start in (0..bufs.len()).step_by(RING_ENTRIES as usize) {
            let end = (start + RING_ENTRIES as usize).min(bufs.len());
            submit_round(ring, fd, &offsets[start..end], &mut bufs[start..end], &mut got[start..end])?;
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
    ring: &mut IoUring,
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
        unsafe { ring.submission().push(&entry) }.map_err(|_| io::Error::other("io_uring queue full"))?;
    }
    // Every read is waited for, failed or not, so none still targets a buffer on return;
    // all at once (one wake-up for the batch, not one per read, which cost a
    // task switch each).
    let mut pending = bufs.len();
    let mut failed = None;
    while pending > 0 {
        match ring.submit_and_wait(pending) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => other?,
        };
        for c in ring.completion() {
            pending -= 1;
            match c.result() {
                r if r < 0 => failed = failed.or(Some(io::Error::from_raw_os_error(-r))),
                r => got[c.user_data() as usize] = r as usize,
            }
        }
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
}
