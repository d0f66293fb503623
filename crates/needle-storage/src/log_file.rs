//! Files that grow by appending: write-ahead logs. Unlike segment files they
//! are written over time and fsynced on demand, so a crash can leave a
//! record half written at the end; the reader of the log decides what that
//! means. Every append and fsync passes the fault-injection hook and the
//! power-loss journal, like every other write of a [`Directory`].

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use needle_core::{Error, Result};

use crate::faults::{self, Op};
use crate::{powerloss, Directory};

/// An open log file; clones share the handle, so one thread can append and
/// fsync while another holds the log's state lock. Appends go at the file's
/// cursor: one appender at a time (the log's group commit sees to it).
#[derive(Clone)]
pub struct LogFile {
    path: PathBuf,
    file: Arc<File>,
}

impl LogFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes` at the end of the file (not durable until [`LogFile::sync`]).
    /// (The power-loss journal needs no note of it: unsynced bytes are what it drops.)
    pub fn append(&self, bytes: &[u8]) -> Result<()> {
        faults::check(Op::Write, &self.path)
            .and_then(|()| (&*self.file).write_all(bytes))
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Makes everything appended so far durable.
    pub fn sync(&self) -> Result<()> {
        faults::check(Op::Fsync, &self.path)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, e))?;
        powerloss::note_fsync(&self.path);
        Ok(())
    }
}

impl Directory {
    /// Creates `name` empty for appending (an existing file of that name is
    /// emptied). The folder is not synced: callers that need the new name to
    /// survive a crash call [`Directory::sync`] after writing a header.
    pub fn create_log(&self, name: &str) -> Result<LogFile> {
        let path = self.file_path(name);
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        powerloss::note_create(&path);
        Ok(LogFile { path, file: Arc::new(file) })
    }

    /// Cuts `name` to its first `len` bytes, durably (a log's torn tail, once
    /// recovery has read everything before it).
    pub fn truncate(&self, name: &str, len: u64) -> Result<()> {
        let path = self.file_path(name);
        let file = OpenOptions::new().write(true).open(&path).map_err(|e| Error::io(&path, e))?;
        faults::check(Op::Write, &path)
            .and_then(|()| file.set_len(len))
            .and_then(|()| faults::check(Op::Fsync, &path))
            .and_then(|()| file.sync_all())
            .map_err(|e| Error::io(&path, e))?;
        powerloss::note_fsync(&path);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_read_back_and_truncate_cuts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let log = dir.create_log("a.log").unwrap();
        log.append(b"hello ").unwrap();
        log.clone().append(b"world").unwrap();
        log.sync().unwrap();
        assert_eq!(dir.read_all("a.log").unwrap(), b"hello world");
        dir.truncate("a.log", 5).unwrap();
        assert_eq!(dir.read_all("a.log").unwrap(), b"hello");
        dir.create_log("a.log").unwrap();
        assert!(dir.read_all("a.log").unwrap().is_empty(), "creating again empties it");
    }
}
