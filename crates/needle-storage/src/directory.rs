//! A folder of write-once files.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use memmap2::{Advice, Mmap};
use needle_core::{Error, Result};

use crate::backend::{FileSource, ReadOptions};
use crate::faults::{self, Op};
use crate::{powerloss, Backend, FileSlice};

#[derive(Clone)]
pub struct Directory {
    path: PathBuf,
    reads: ReadOptions,
}

impl std::fmt::Debug for Directory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Directory({}, {})", self.path.display(), self.reads.backend.name())
    }
}

impl Directory {
    /// Opens `path`, creating the folder when `create` is set.
    pub fn open(path: &Path, create: bool) -> Result<Self> {
        if create {
            fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
        } else if !path.is_dir() {
            return Err(Error::not_found(format!("index folder {}", path.display())));
        }
        Ok(Directory { path: path.to_path_buf(), reads: ReadOptions::default() })
    }

    /// The same folder, its files read as `reads` says.
    pub fn with_reads(mut self, reads: ReadOptions) -> Self {
        self.reads = reads;
        self
    }

    pub fn reads(&self) -> &ReadOptions {
        &self.reads
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file_path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub fn exists(&self, name: &str) -> bool {
        self.file_path(name).exists()
    }

    /// Opens a file for reading with the directory's backend (a mapping
    /// has kernel readahead turned off).
    pub fn open_read(&self, name: &str) -> Result<FileSlice> {
        let path = self.file_path(name);
        if self.reads.backend != Backend::Mmap {
            return Ok(FileSlice::file(name, FileSource::open(&path, &self.reads)?));
        }
        let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        if len == 0 {
            return Ok(FileSlice::from_vec(name, Vec::new()));
        }
        // SAFETY: index files are written once and never modified in place; a
        // file is deleted only after no segment that maps it remains open.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(&path, e))?;
        // Advice is a hint: a kernel that refuses it still serves correct reads.
        let _ = map.advise(Advice::Random);
        Ok(FileSlice::mapped(name, map))
    }

    /// Reads a whole (small) file into memory.
    pub fn read_all(&self, name: &str) -> Result<Vec<u8>> {
        let path = self.file_path(name);
        fs::read(&path).map_err(|e| Error::io(&path, e))
    }

    /// Creates a new file; it becomes durable when [`FileWriter::finish`] returns.
    pub fn create(&self, name: &str) -> Result<FileWriter> {
        let path = self.file_path(name);
        let file =
            OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| Error::io(&path, e))?;
        powerloss::note_create(&path);
        Ok(FileWriter { path, out: BufWriter::with_capacity(1 << 20, file), written: 0 })
    }

    /// Replaces `name` atomically: write a temporary file, fsync it, rename it
    /// over `name`, fsync the folder. A crash leaves the old or the new file.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let tmp = format!("{name}.tmp");
        self.delete(&tmp)?;
        let mut writer = self.create(&tmp)?;
        writer.write_all(bytes)?;
        writer.finish()?;
        let from = self.file_path(&tmp);
        let to = self.file_path(name);
        faults::check(Op::Rename, &to)
            .and_then(|()| fs::rename(&from, &to))
            .map_err(|e| Error::io(&to, e))?;
        powerloss::note_rename(&from, &to);
        self.sync()
    }

    /// Makes renames and creations in the folder durable.
    pub fn sync(&self) -> Result<()> {
        let dir = File::open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        faults::check(Op::Fsync, &self.path)
            .and_then(|()| dir.sync_all())
            .map_err(|e| Error::io(&self.path, e))?;
        powerloss::note_fsync(&self.path);
        Ok(())
    }

    pub fn delete(&self, name: &str) -> Result<()> {
        let path = self.file_path(name);
        match fs::remove_file(&path) {
            Ok(()) => {
                powerloss::note_delete(&path);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Names of the files in the folder, sorted.
    pub fn list(&self) -> Result<Vec<String>> {
        let entries = fs::read_dir(&self.path).map_err(|e| Error::io(&self.path, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&self.path, e))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        names.sort();
        Ok(names)
    }

    /// Takes the index's writer lock (an advisory `flock`, so it is released
    /// when the process dies) and writes who holds it into the lock file; it
    /// is released when the returned file is dropped. A second taker, in this
    /// process or another, gets [`Error::Locked`] naming the holder.
    pub fn lock(&self, name: &str) -> Result<File> {
        let path = self.file_path(name);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        if file.try_lock().is_err() {
            let mut holder = String::new();
            let _ = std::io::Read::read_to_string(&mut file, &mut holder);
            let holder = match holder.trim() {
                "" => format!("lock file {}", path.display()),
                h => needle_core::printable(h, 200),
            };
            return Err(Error::Locked { path: self.path.clone(), holder });
        }
        let me = format!("process {} ({})", std::process::id(), command_line());
        // Naming the holder is for messages only: a failure here leaves the lock held and valid.
        let _ = file.set_len(0).and_then(|()| (&file).write_all(me.as_bytes()));
        Ok(file)
    }
}

/// This process's command line, cut short, for naming a lock's holder.
fn command_line() -> String {
    let args: Vec<String> = std::env::args().collect();
    needle_core::printable(&args.join(" "), 120)
}

/// A buffered writer for a new file that knows how many bytes it has written.
pub struct FileWriter {
    path: PathBuf,
    out: BufWriter<File>,
    written: u64,
}

impl FileWriter {
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        faults::check(Op::Write, &self.path)
            .and_then(|()| self.out.write_all(bytes))
            .map_err(|e| Error::io(&self.path, e))?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Bytes written so far: the offset the next write lands at.
    pub fn position(&self) -> u64 {
        self.written
    }

    /// Flushes and fsyncs the file.
    pub fn finish(self) -> Result<u64> {
        let file = self.out.into_inner().map_err(|e| Error::io(&self.path, e.into_error()))?;
        faults::check(Op::Fsync, &self.path)
            .and_then(|()| file.sync_all())
            .map_err(|e| Error::io(&self.path, e))?;
        powerloss::note_fsync(&self.path);
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_file_reads_back_and_atomic_write_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let mut w = dir.create("a").unwrap();
        w.write_all(b"hello").unwrap();
        assert_eq!(w.finish().unwrap(), 5);
        assert_eq!(&*open_read_a(&dir), b"el");
        dir.write_atomic("m", b"one").unwrap();
        dir.write_atomic("m", b"two").unwrap();
        assert_eq!(dir.read_all("m").unwrap(), b"two");
        assert!(dir.create("a").is_err(), "files are write-once");
    }

    fn open_read_a(dir: &Directory) -> crate::ReadBytes {
        dir.open_read("a").unwrap().slice(1..4).read(0..2).unwrap()
    }

    #[test]
    fn second_lock_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let _held = dir.lock("write.lock").unwrap();
        let err = dir.lock("write.lock").unwrap_err();
        assert!(matches!(&err, Error::Locked { .. }), "{err}");
        assert!(err.to_string().contains(&format!("process {}", std::process::id())), "{err}");
    }
}
