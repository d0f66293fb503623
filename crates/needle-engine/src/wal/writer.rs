//! Appending to the log, with group commit: appends go to a buffer; the first
//! writer that needs its record durable takes the turn to write and fsync the
//! whole buffer for everyone waiting, the others wait for it. After a failed
//! write or fsync the log refuses all later work (the page cache may have
//! dropped the failed pages, so a retry could report success for data that is
//! gone).

use std::sync::{Condvar, Mutex, MutexGuard};

use needle_core::{Error, Result};
use needle_storage::{Directory, LogFile};

use super::{encode, file_name, header, Record};

struct State {
    file: LogFile,
    buffer: Vec<u8>,
    appended: u64,
    synced: u64,
    /// A writer is writing and fsyncing the buffer it took.
    syncing: bool,
    failed: Option<String>,
    /// Bytes written to the current file: what replaying it would read.
    file_bytes: u64,
}

pub struct Wal {
    dir: Directory,
    state: Mutex<State>,
    synced: Condvar,
}

/// Creates log file `start_lsn` with its header, durably (the file and its name).
fn start_file(dir: &Directory, start_lsn: u64) -> Result<LogFile> {
    let file = dir.create_log(&file_name(start_lsn))?;
    file.append(&header(start_lsn))?;
    file.sync()?;
    dir.sync()?;
    Ok(file)
}

/// The turn to write and fsync: whatever happens while it is held (an error
/// returned early, a panic), dropping it hands the turn back and wakes the
/// writers waiting for it.
struct SyncTurn<'a> {
    wal: &'a Wal,
}

impl Drop for SyncTurn<'_> {
    fn drop(&mut self) {
        self.wal.lock().syncing = false;
        self.wal.synced.notify_all();
    }
}

impl Wal {
    /// Starts a new log file whose first record will be `start_lsn`.
    pub fn create(dir: &Directory, start_lsn: u64) -> Result<Wal> {
        let file = start_file(dir, start_lsn)?;
        let last = start_lsn.saturating_sub(1);
        let state = State {
            file,
            buffer: Vec::new(),
            appended: last,
            synced: last,
            syncing: false,
            failed: None,
            file_bytes: 0,
        };
        Ok(Wal { dir: dir.clone(), state: Mutex::new(state), synced: Condvar::new() })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves consistent numbers behind.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Buffers a record. Callers append in increasing `lsn` order, one apart.
    pub fn append(&self, lsn: u64, record: &Record) {
        let mut st = self.lock();
        let before = st.buffer.len();
        encode(lsn, record, &mut st.buffer);
        st.file_bytes += (st.buffer.len() - before) as u64;
        st.appended = lsn;
    }

    /// Bytes of records in the current file (written or buffered): what a
    /// replay after a crash now would read.
    pub fn file_bytes(&self) -> u64 {
        self.lock().file_bytes
    }

    /// Returns once every record up to `lsn` is on disk (fsynced); for a
    /// number not appended yet, every record appended (waiting for one no
    /// write has taken would never end).
    pub fn sync_to(&self, lsn: u64) -> Result<()> {
        let mut st = self.lock();
        let lsn = lsn.min(st.appended);
        loop {
            if let Some(e) = &st.failed {
                return Err(Error::Poisoned { cause: format!("the write-ahead log failed earlier: {e}") });
            }
            if st.synced >= lsn {
                return Ok(());
            }
            if st.syncing {
                st = self.synced.wait(st).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            st.syncing = true;
            let turn = SyncTurn { wal: self };
            let buffer = std::mem::take(&mut st.buffer);
            let target = st.appended;
            let file = st.file.clone();
            drop(st);
            let written = file.append(&buffer).and_then(|()| file.sync());
            st = self.lock();
            match written {
                Ok(()) => st.synced = st.synced.max(target),
                Err(e) => st.failed = Some(e.to_string()),
            }
            drop(st);
            drop(turn);
            st = self.lock();
        }
    }

    /// Makes everything appended durable, then continues in a new file whose
    /// first record will be `next_lsn` (so older files can be dropped once a
    /// commit covers them).
    pub fn rotate(&self, next_lsn: u64) -> Result<()> {
        self.sync_to(next_lsn.saturating_sub(1))?;
        let file = start_file(&self.dir, next_lsn).inspect_err(|e| {
            self.lock().failed.get_or_insert_with(|| e.to_string());
        })?;
        let mut st = self.lock();
        st.file = file;
        st.file_bytes = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use needle_storage::faults::{self, Op};

    use super::*;

    #[test]
    fn a_failed_fsync_refuses_all_later_writes_and_waiters_are_not_left_hanging() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let wal = Wal::create(&dir, 1).unwrap();
        faults::inject(Op::Fsync, &tmp.path().to_string_lossy(), 0, false, std::io::ErrorKind::Other);
        wal.append(1, &Record::Delete("a".into()));
        let first = wal.sync_to(1);
        faults::clear();
        assert!(first.is_err());
        wal.append(2, &Record::Delete("a".into()));
        let later = wal.sync_to(2).unwrap_err();
        assert!(matches!(later, Error::Poisoned { .. }), "{later}");
        assert!(!wal.lock().syncing, "the turn was handed back");
    }

    #[test]
    fn concurrent_writers_share_fsyncs() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let wal = Wal::create(&dir, 1).unwrap();
        let next = Mutex::new(1u64);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        let lsn = {
                            let mut n = next.lock().unwrap();
                            wal.append(*n, &Record::Delete("x".into()));
                            *n += 1;
                            *n - 1
                        };
                        wal.sync_to(lsn).unwrap();
                    }
                });
            }
        });
        let mut seen = 0;
        super::super::replay(&dir, 0, super::super::OnDamage::Fail, &mut |_, _| {
            seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, 200);
    }
}
