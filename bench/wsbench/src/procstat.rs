//! Per-process counters from /proc, summed over an engine process and all its
//! descendants (a wrapper script's JVM included): storage read bytes
//! (/proc/PID/io `read_bytes`: bytes fetched from the block device on the
//! process's behalf) and CPU seconds (/proc/PID/stat utime + stime).

use std::collections::HashMap;
use std::fs;

#[derive(Debug, Clone, Copy, Default)]
pub struct ProcCounters {
    pub read_bytes: u64,
    pub rchar: u64,
    pub cpu_seconds: f64,
}

impl ProcCounters {
    pub fn since(&self, earlier: &ProcCounters) -> ProcCounters {
        ProcCounters {
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            rchar: self.rchar.saturating_sub(earlier.rchar),
            cpu_seconds: (self.cpu_seconds - earlier.cpu_seconds).max(0.0),
        }
    }
}

/// `pid` and every process descended from it.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(rd) = fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            if let Some((ppid, _, _)) = read_stat(p) {
                children.entry(ppid).or_default().push(p);
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        if let Some(c) = children.get(&out[i]) {
            out.extend(c);
        }
        i += 1;
    }
    out
}

/// (ppid, utime ticks, stime ticks) from /proc/PID/stat.
fn read_stat(pid: u32) -> Option<(u32, u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); ppid is field 4, utime 14, stime 15.
    Some((f.get(1)?.parse().ok()?, f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?))
}

fn read_io(pid: u32) -> (u64, u64) {
    let Ok(s) = fs::read_to_string(format!("/proc/{pid}/io")) else { return (0, 0) };
    let mut read_bytes = 0;
    let mut rchar = 0;
    for line in s.lines() {
        if let Some(v) = line.strip_prefix("read_bytes: ") {
            read_bytes = v.trim().parse().unwrap_or(0);
        } else if let Some(v) = line.strip_prefix("rchar: ") {
            rchar = v.trim().parse().unwrap_or(0);
        }
    }
    (read_bytes, rchar)
}

fn ticks_per_second() -> f64 {
    // USER_HZ is 100 on every Linux architecture WSBench runs on.
    100.0
}

/// Current counters of the process tree rooted at `pid`.
pub fn sample(pid: u32) -> ProcCounters {
    let mut c = ProcCounters::default();
    for p in process_tree(pid) {
        let (rb, rc) = read_io(p);
        c.read_bytes += rb;
        c.rchar += rc;
        if let Some((_, u, s)) = read_stat(p) {
            c.cpu_seconds += (u + s) as f64 / ticks_per_second();
        }
    }
    c
}

/// Resident memory of this process (VmRSS) in KiB.
pub fn self_rss_kb() -> u64 {
    rss_kb("self")
}

/// Resident memory (VmRSS) in KiB of the process `pid` (a number or `self`); 0 if unknown.
pub fn rss_kb(pid: &str) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmRSS:").and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

/// CPU time the calling thread has used, in nanoseconds (0 if the clock cannot be read).
pub fn thread_cpu_nanos() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    match rc {
        0 => ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
        _ => 0,
    }
}
