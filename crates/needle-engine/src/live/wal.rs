//! The write-ahead log: every change, in sequence-number order, so a crash
//! loses nothing that was acknowledged in `durable` mode.
//!
//! ```text
//! wal-<StartLsn:020>.log := Header Record*
//! Header := Magic "NDLW" Version:u32 StartLsn:u64                      (16 bytes)
//! Record := Len:u32 Crc32:u32 Lsn:u64 Kind:u8 Payload[Len - 9]
//! ```
//!
//! `Crc32` covers `Lsn Kind Payload`. `Kind` 1 = add or replace (payload: the
//! document's JSON line), 2 = delete (payload: the `_id`). Integers are
//! little-endian. A record cut short or with a bad checksum ends the file's
//! replay: it was being written when the process died, and was not acknowledged.
//!
//! Group commit: appends go to a buffer; the first writer that needs its
//! record durable writes and fsyncs the whole buffer for everyone waiting,
//! the others wait for it. After a failed write or fsync the log refuses all
//! later work (the page cache may have dropped the failed pages, so a retry
//! could report success for data that is gone).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex};

use needle_core::{Error, Result};
use needle_storage::faults::{self, Op};
use needle_storage::Directory;

const MAGIC: &[u8; 4] = b"NDLW";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Add(String),
    Delete(String),
}

struct State {
    file: File,
    path: PathBuf,
    buffer: Vec<u8>,
    appended: u64,
    synced: u64,
    syncing: bool,
    failed: Option<String>,
}

pub struct Wal {
    dir: Directory,
    state: Mutex<State>,
    synced: Condvar,
}

fn file_name(start_lsn: u64) -> String {
    format!("wal-{start_lsn:020}.log")
}

fn open_file(dir: &Directory, start_lsn: u64) -> Result<(File, PathBuf)> {
    let path = dir.file_path(&file_name(start_lsn));
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&start_lsn.to_le_bytes());
    file.write_all(&header).and_then(|()| file.sync_data()).map_err(|e| Error::io(&path, e))?;
    dir.sync()?;
    Ok((file, path))
}

impl Wal {
    /// Starts a new log file whose first record will be `start_lsn`.
    pub fn create(dir: &Directory, start_lsn: u64) -> Result<Wal> {
        let (file, path) = open_file(dir, start_lsn)?;
        let last = start_lsn.saturating_sub(1);
        let state = State {
            file,
            path,
            buffer: Vec::new(),
            appended: last,
            synced: last,
            syncing: false,
            failed: None,
        };
        Ok(Wal { dir: dir.clone(), state: Mutex::new(state), synced: Condvar::new() })
    }

    /// Buffers a record. Callers append in increasing `lsn` order.
    pub fn append(&self, lsn: u64, record: &Record) {
        let (kind, payload) = match record {
            Record::Add(json) => (1u8, json.as_bytes()),
            Record::Delete(id) => (2u8, id.as_bytes()),
        };
        let mut body = Vec::with_capacity(9 + payload.len());
        body.extend_from_slice(&lsn.to_le_bytes());
        body.push(kind);
        body.extend_from_slice(payload);
        let mut st = self.state.lock().unwrap();
        st.buffer.extend_from_slice(&(body.len() as u32).to_le_bytes());
        st.buffer.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        st.buffer.extend_from_slice(&body);
        st.appended = lsn;
    }

    /// Returns once every record up to `lsn` is on disk (fsynced).
    pub fn sync_to(&self, lsn: u64) -> Result<()> {
        let mut st = self.state.lock().unwrap();
        loop {
            if let Some(e) = &st.failed {
                return Err(Error::Poisoned { cause: format!("the write-ahead log failed earlier: {e}") });
            }
            if st.synced >= lsn {
                return Ok(());
            }
            if st.syncing {
                st = self.synced.wait(st).unwrap();
                continue;
            }
            st.syncing = true;
            let buffer = std::mem::take(&mut st.buffer);
            let target = st.appended;
            let path = st.path.clone();
            let mut file = st.file.try_clone().map_err(|e| Error::io(&path, e))?;
            drop(st);
            let written = faults::check(Op::Write, &path)
                .and_then(|()| file.write_all(&buffer))
                .and_then(|()| faults::check(Op::Fsync, &path))
                .and_then(|()| file.sync_data());
            st = self.state.lock().unwrap();
            st.syncing = false;
            match written {
                Ok(()) => st.synced = st.synced.max(target),
                Err(e) => st.failed = Some(format!("{}: {e}", path.display())),
            }
            self.synced.notify_all();
        }
    }

    /// Makes everything appended durable, then continues in a new file whose
    /// first record will be `next_lsn` (so older files can be dropped once a
    /// commit covers them).
    pub fn rotate(&self, next_lsn: u64) -> Result<()> {
        self.sync_to(next_lsn.saturating_sub(1))?;
        let (file, path) = open_file(&self.dir, next_lsn)?;
        let mut st = self.state.lock().unwrap();
        st.file = file;
        st.path = path;
        Ok(())
    }
}

/// Start sequence numbers of the log files in `dir`, ascending.
fn log_files(dir: &Directory) -> Result<Vec<(u64, String)>> {
    let mut files: Vec<(u64, String)> = dir
        .list()?
        .into_iter()
        .filter_map(|n| {
            let lsn = n.strip_prefix("wal-")?.strip_suffix(".log")?.parse().ok()?;
            Some((lsn, n))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Calls `apply` for every intact record with a sequence number above
/// `after`, in order; returns the highest sequence number seen.
pub fn replay(dir: &Directory, after: u64, apply: &mut dyn FnMut(u64, Record) -> Result<()>) -> Result<u64> {
    let mut last = after;
    for (_, name) in log_files(dir)? {
        let bytes = dir.read_all(&name)?;
        if bytes.len() < HEADER_LEN || &bytes[..4] != MAGIC {
            continue; // created but never written: a crash during rotation
        }
        let version = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
        if version != VERSION {
            return Err(Error::Format {
                file: name,
                reason: format!("log version {version}; this build reads {VERSION}"),
            });
        }
        let mut pos = HEADER_LEN;
        while let Some((lsn, record, next)) = read_record(&bytes, pos) {
            pos = next;
            if lsn > last {
                apply(lsn, record)?;
                last = lsn;
            }
        }
    }
    Ok(last)
}

fn read_record(bytes: &[u8], pos: usize) -> Option<(u64, Record, usize)> {
    let len = u32::from_le_bytes(bytes.get(pos..pos + 4)?.try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(bytes.get(pos + 4..pos + 8)?.try_into().ok()?);
    let body = bytes.get(pos + 8..pos + 8 + len)?;
    if len < 9 || crc32fast::hash(body) != crc {
        return None;
    }
    let lsn = u64::from_le_bytes(body[..8].try_into().ok()?);
    let payload = String::from_utf8(body[9..].to_vec()).ok()?;
    let record = match body[8] {
        1 => Record::Add(payload),
        2 => Record::Delete(payload),
        _ => return None,
    };
    Some((lsn, record, pos + 8 + len))
}

/// Deletes the log files whose every record is at most `lsn` (a commit holds them).
pub fn remove_through(dir: &Directory, lsn: u64) -> Result<()> {
    let files = log_files(dir)?;
    for pair in files.windows(2) {
        if pair[1].0 <= lsn + 1 {
            dir.delete(&pair[0].1)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_replay_in_order_and_a_torn_tail_is_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let wal = Wal::create(&dir, 1).unwrap();
        wal.append(1, &Record::Add("{\"id\":\"a\"}".into()));
        wal.append(2, &Record::Delete("a".into()));
        wal.sync_to(2).unwrap();
        wal.rotate(3).unwrap();
        wal.append(3, &Record::Add("{}".into()));
        wal.sync_to(3).unwrap();
        let name = file_name(3);
        let mut bytes = dir.read_all(&name).unwrap();
        bytes.extend_from_slice(&[9, 0, 0, 0, 1, 2]);
        std::fs::write(dir.file_path(&name), &bytes).unwrap();
        let mut seen = Vec::new();
        let last = replay(&dir, 1, &mut |lsn, r| {
            seen.push((lsn, r));
            Ok(())
        })
        .unwrap();
        assert_eq!(last, 3);
        assert_eq!(seen, [(2, Record::Delete("a".into())), (3, Record::Add("{}".into()))]);
        remove_through(&dir, 2).unwrap();
        assert_eq!(log_files(&dir).unwrap().len(), 1);
    }

    #[test]
    fn a_failed_fsync_refuses_all_later_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let wal = Wal::create(&dir, 1).unwrap();
        faults::inject(Op::Fsync, &tmp.path().to_string_lossy(), 0, false, std::io::ErrorKind::Other);
        wal.append(1, &Record::Add("{}".into()));
        let first = wal.sync_to(1);
        faults::clear();
        assert!(first.is_err());
        wal.append(2, &Record::Add("{}".into()));
        assert!(wal.sync_to(2).unwrap_err().to_string().contains("refuses"));
    }
}
