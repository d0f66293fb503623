//! Fault injection for tests: make the next write, fsync, rename or read of a
//! file whose path contains a given text fail, as a full or failing disk
//! would (a read fault named `UnexpectedEof` stands for a short read).
//! Production code asks [`check`] before each such call; with no fault armed
//! that is one relaxed atomic load. Reads are checked by file name, at
//! [`crate::FileSlice::read`], so every backend (a mapping too) fails alike.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The operations a fault can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Write,
    Fsync,
    Rename,
    Read,
}

struct Fault {
    op: Op,
    path_contains: String,
    /// Calls that pass before the fault fires.
    skip: u32,
    /// Fire on every later call too (a disk that stays full), not just once.
    sticky: bool,
    kind: io::ErrorKind,
}

static ARMED: AtomicBool = AtomicBool::new(false);
static FAULTS: Mutex<Vec<Fault>> = Mutex::new(Vec::new());

/// Arms a fault: the `skip + 1`-th `op` on a path containing `path_contains` fails with `kind`.
pub fn inject(op: Op, path_contains: &str, skip: u32, sticky: bool, kind: io::ErrorKind) {
    FAULTS.lock().unwrap().push(Fault { op, path_contains: path_contains.to_string(), skip, sticky, kind });
    ARMED.store(true, Ordering::SeqCst);
}

/// Disarms every fault.
pub fn clear() {
    FAULTS.lock().unwrap().clear();
    ARMED.store(false, Ordering::SeqCst);
}

/// Fails when an armed fault matches this call, or once a simulated power
/// loss ([`crate::powerloss`]) has cut the folder's power.
pub fn check(op: Op, path: &Path) -> io::Result<()> {
    if op != Op::Read {
        crate::powerloss::check(path)?;
    }
    if !ARMED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut faults = FAULTS.lock().unwrap();
    let path = path.to_string_lossy();
    let Some(i) = faults.iter().position(|f| f.op == op && path.contains(&f.path_contains)) else {
        return Ok(());
    };
    if faults[i].skip > 0 {
        faults[i].skip -= 1;
        return Ok(());
    }
    let kind = faults[i].kind;
    if !faults[i].sticky {
        faults.remove(i);
    }
    Err(io::Error::new(kind, format!("injected {op:?} failure")))
}
