//! Simulated power loss, for tests (as Lucene's `MockDirectoryWrapper.crash`):
//! a journal of what each write to a folder made durable, so that a test can
//! cut the power at any operation and put the folder back into the state a
//! machine that lost power then would find on reboot.
//!
//! The model is the pessimistic one POSIX allows:
//! - a file's bytes are durable as of its last fsync; bytes written since are lost
//!   (a file never fsynced comes back empty);
//! - a folder's names are durable as of the folder's last fsync: names created
//!   since vanish, names deleted since come back, renames since are undone.
//!
//! Production code reports each operation ([`note_create`] and the others);
//! [`crate::faults::check`] asks [`check`] before each write, fsync and rename,
//! which fails once the power is cut. With no folder armed each hook is one
//! relaxed atomic load.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static ARMED: AtomicBool = AtomicBool::new(false);
static JOURNALS: Mutex<Vec<Journal>> = Mutex::new(Vec::new());

struct Journal {
    folder: PathBuf,
    next_inode: u64,
    /// Name -> file, now.
    live: HashMap<String, u64>,
    /// Name -> file, as of the folder's last fsync.
    durable: HashMap<String, u64>,
    /// File -> its bytes as of its last fsync.
    contents: HashMap<u64, Vec<u8>>,
    /// Writes, fsyncs and renames checked so far.
    ops: u64,
    /// The power goes out before operation number `cut_at` (counting from 0).
    cut_at: Option<u64>,
}

impl Journal {
    fn inode(&mut self) -> u64 {
        self.next_inode += 1;
        self.next_inode
    }
}

/// Starts journaling `folder`: its files as they are now count as durable.
pub fn arm(folder: &Path) -> io::Result<()> {
    let mut journal = Journal {
        folder: folder.to_path_buf(),
        next_inode: 0,
        live: HashMap::new(),
        durable: HashMap::new(),
        contents: HashMap::new(),
        ops: 0,
        cut_at: None,
    };
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
        let inode = journal.inode();
        journal.contents.insert(inode, std::fs::read(entry.path())?);
        journal.live.insert(name.clone(), inode);
        journal.durable.insert(name, inode);
    }
    let mut all = JOURNALS.lock().unwrap();
    all.retain(|j| j.folder != folder);
    all.push(journal);
    ARMED.store(true, Ordering::SeqCst);
    Ok(())
}

/// Cuts the power before the `ops`-th write, fsync or rename in `folder` from
/// now on (0: the next one): it and every later one fail.
pub fn cut_after(folder: &Path, ops: u64) {
    with_folder(folder, |j| j.cut_at = Some(j.ops + ops));
}

/// Writes, fsyncs and renames checked in `folder` since it was armed.
pub fn operations(folder: &Path) -> u64 {
    with_folder(folder, |j| j.ops).unwrap_or(0)
}

/// Puts `folder` into the state its journal says survived, and stops
/// journaling it. Call once nothing has the folder's files open for writing.
pub fn crash(folder: &Path) -> io::Result<()> {
    let journal = {
        let mut all = JOURNALS.lock().unwrap();
        let at = all.iter().position(|j| j.folder == folder);
        let journal = at.map(|i| all.remove(i));
        ARMED.store(!all.is_empty(), Ordering::SeqCst);
        journal
    };
    let Some(journal) = journal else {
        return Err(io::Error::other(format!("{} is not armed", folder.display())));
    };
    for entry in std::fs::read_dir(folder)? {
        std::fs::remove_file(entry?.path())?;
    }
    for (name, inode) in &journal.durable {
        let bytes = journal.contents.get(inode).map_or(&[][..], Vec::as_slice);
        std::fs::write(folder.join(name), bytes)?;
    }
    Ok(())
}

/// Fails once the power of the folder holding `path` is cut; counts the operation.
pub(crate) fn check(path: &Path) -> io::Result<()> {
    if !ARMED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let cut = with_path(path, |j, _| {
        let cut = j.cut_at.is_some_and(|at| j.ops >= at);
        j.ops += 1;
        cut
    });
    match cut {
        Some(true) => Err(io::Error::other("simulated power loss")),
        _ => Ok(()),
    }
}

/// A file was created (or emptied, when the name exists).
pub(crate) fn note_create(path: &Path) {
    note(path, |j, name| {
        if !j.live.contains_key(&name) {
            let inode = j.inode();
            j.live.insert(name, inode);
        }
    });
}

/// A file was fsynced: its bytes now are what survives. Its folder's fsync
/// (`path` is the folder itself) makes the folder's names durable.
pub(crate) fn note_fsync(path: &Path) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    let mut all = JOURNALS.lock().unwrap();
    if let Some(j) = all.iter_mut().find(|j| j.folder == path) {
        j.durable = j.live.clone();
        return;
    }
    drop(all);
    let bytes = std::fs::read(path).unwrap_or_default();
    note(path, |j, name| {
        let inode = match j.live.get(&name) {
            Some(&inode) => inode,
            None => {
                let inode = j.inode();
                j.live.insert(name, inode);
                inode
            }
        };
        j.contents.insert(inode, bytes);
    });
}

pub(crate) fn note_rename(from: &Path, to: &Path) {
    let Some(to_name) = to.file_name().and_then(|n| n.to_str()).map(str::to_string) else { return };
    note(from, |j, from_name| {
        if let Some(inode) = j.live.remove(&from_name) {
            j.live.insert(to_name, inode);
        }
    });
}

pub(crate) fn note_delete(path: &Path) {
    note(path, |j, name| {
        j.live.remove(&name);
    });
}

fn note(path: &Path, f: impl FnOnce(&mut Journal, String)) {
    if ARMED.load(Ordering::Relaxed) {
        with_path(path, f);
    }
}

fn with_path<T>(path: &Path, f: impl FnOnce(&mut Journal, String) -> T) -> Option<T> {
    let folder = path.parent()?;
    let name = path.file_name()?.to_str()?.to_string();
    with_folder(folder, |j| f(j, name))
}

fn with_folder<T>(folder: &Path, f: impl FnOnce(&mut Journal) -> T) -> Option<T> {
    let mut all = JOURNALS.lock().unwrap();
    all.iter_mut().find(|j| j.folder == folder).map(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Directory;

    #[test]
    fn only_what_was_fsynced_survives() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        dir.write_atomic("kept", b"before").unwrap();
        arm(tmp.path()).unwrap();
        let mut w = dir.create("synced").unwrap();
        w.write_all(b"durable").unwrap();
        w.finish().unwrap();
        let log = dir.create_log("log").unwrap();
        log.append(b"one ").unwrap();
        log.sync().unwrap();
        dir.sync().unwrap();
        log.append(b"two").unwrap(); // never fsynced
        let mut w = dir.create("unnamed").unwrap(); // fsynced, but its name never was
        w.write_all(b"x").unwrap();
        w.finish().unwrap();
        dir.delete("kept").unwrap(); // the deletion never reached the folder's fsync
        crash(tmp.path()).unwrap();
        assert_eq!(dir.read_all("synced").unwrap(), b"durable");
        assert_eq!(dir.read_all("log").unwrap(), b"one ");
        assert_eq!(dir.read_all("kept").unwrap(), b"before");
        assert!(!dir.exists("unnamed"));
    }

    #[test]
    fn cut_power_fails_every_later_write() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        arm(tmp.path()).unwrap();
        dir.write_atomic("a", b"1").unwrap();
        let done = operations(tmp.path());
        assert!(done >= 3, "write, fsync, rename and the folder's fsync are counted: {done}");
        cut_after(tmp.path(), 1);
        let log = dir.create_log("log").unwrap();
        log.append(b"x").unwrap();
        assert!(log.sync().is_err());
        assert!(dir.write_atomic("a", b"2").is_err());
        crash(tmp.path()).unwrap();
        assert_eq!(dir.read_all("a").unwrap(), b"1");
        assert!(!dir.exists("log"), "created after the folder's last fsync");
    }
}
