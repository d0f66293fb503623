//! Memory limits and cold caches: a memory cgroup for the engine process (v1 at
//! /sys/fs/cgroup/memory/<name> with memory.limit_in_bytes; v2 with memory.max
//! where the unified hierarchy has the memory controller), and dropping the
//! kernel's page cache (sync; echo 3 > /proc/sys/vm/drop_caches). Both need root.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::Result;

#[derive(Debug)]
pub struct MemCgroup {
    dir: PathBuf,
    v2: bool,
    pub limit: u64,
}

impl MemCgroup {
    /// Creates a fresh cgroup `name` limited to `limit` bytes (page cache included).
    pub fn create(name: &str, limit: u64) -> Result<MemCgroup> {
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let unified = Path::new("/sys/fs/cgroup");
        let (dir, v2) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(name), false)
        } else if fs::read_to_string(unified.join("cgroup.controllers")).is_ok_and(|c| c.contains("memory")) {
            (unified.join(name), true)
        } else {
            return Err(
                "no memory cgroup controller found (v1 /sys/fs/cgroup/memory or v2 /sys/fs/cgroup)".into()
            );
        };
        if dir.exists() {
            let _ = fs::remove_dir(&dir);
        }
        fs::create_dir(&dir).map_err(|e| format!("creating {} (needs root): {e}", dir.display()))?;
        let cg = MemCgroup { dir, v2, limit };
        if v2 {
            cg.write("memory.max", &limit.to_string())?;
            let _ = cg.write("memory.swap.max", "0");
        } else {
            cg.write("memory.limit_in_bytes", &limit.to_string())?;
            let _ = cg.write("memory.swappiness", "0");
        }
        Ok(cg)
    }

    fn write(&self, file: &str, value: &str) -> Result<()> {
        let p = self.dir.join(file);
        fs::write(&p, value).map_err(|e| format!("writing {value} to {}: {e}", p.display()).into())
    }

    fn read_u64(&self, file: &str) -> Option<u64> {
        fs::read_to_string(self.dir.join(file)).ok()?.trim().parse().ok()
    }

    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Counters worth keeping with a result: peak usage, how often the limit was hit.
    pub fn counters(&self) -> serde_json::Value {
        if self.v2 {
            serde_json::json!({
                "limit_bytes": self.limit,
                "peak_bytes": self.read_u64("memory.peak"),
                "current_bytes": self.read_u64("memory.current"),
            })
        } else {
            serde_json::json!({
                "limit_bytes": self.limit,
                "peak_bytes": self.read_u64("memory.max_usage_in_bytes"),
                "current_bytes": self.read_u64("memory.usage_in_bytes"),
                "failcnt": self.read_u64("memory.failcnt"),
            })
        }
    }

    /// Removes the (empty) cgroup.
    pub fn remove(&self) {
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!("warning: could not remove {}", self.dir.display());
    }
}

/// Writes dirty pages and drops the page cache, dentries and inodes (affects the whole machine).
pub fn drop_caches() -> Result<()> {
    let status = std::process::Command::new("sync").status()?;
    if !status.success() {
        return Err("sync failed".into());
    }
    fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| format!("dropping caches (needs root): writing /proc/sys/vm/drop_caches: {e}").into())
}
