//! The machine's figures `_cat/nodes` shows, read from `/proc` when asked:
//! memory, load averages, and the share of CPU time busy since the last
//! reading (since boot at the first). Missing files (another OS) leave them out.

use std::net::SocketAddr;
use std::sync::Mutex;

use needle_cluster::NodeInfo;
use serde_json::{Map, Value};

#[derive(Debug, Default)]
pub struct NodeStats {
    pub ram_total: Option<u64>,
    pub ram_used: Option<u64>,
    /// Load averages over 1, 5 and 15 minutes.
    pub load: Option<[f64; 3]>,
    pub cpu_percent: Option<u64>,
}

/// (busy, all) jiffies of every CPU at the last reading.
static LAST_CPU: Mutex<(u64, u64)> = Mutex::new((0, 0));

/// What this node tells the rest of its cluster about itself: where it
/// serves, and its `_cat/nodes` figures now.
pub fn node_info(id: &str, name: &str, address: SocketAddr) -> NodeInfo {
    NodeInfo {
        id: id.to_string(),
        name: name.to_string(),
        address: address.to_string(),
        host: crate::server::hostname(),
        figures: figures(),
    }
}

/// The `_cat/nodes` cells that are this machine's and this process's figures, by column.
pub fn figures() -> Map<String, Value> {
    let system = read();
    let percent = |part: Option<u64>, whole: Option<u64>| match (part, whole) {
        (Some(p), Some(w)) if w > 0 => (p * 100 / w).to_string(),
        _ => String::new(),
    };
    let load = |i: usize| system.load.map(|l| format!("{:.2}", l[i])).unwrap_or_default();
    let cells = [
        // No heap: the share of the machine's memory this process holds.
        ("heap.percent", percent(needle_storage::counters::resident_bytes(), system.ram_total)),
        ("ram.percent", percent(system.ram_used, system.ram_total)),
        ("cpu", system.cpu_percent.map(|c| c.to_string()).unwrap_or_default()),
        ("load_1m", load(0)),
        ("load_5m", load(1)),
        ("load_15m", load(2)),
    ];
    cells.into_iter().map(|(k, v)| (k.to_string(), Value::String(v))).collect()
}

pub fn read() -> NodeStats {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kb = |key: &str| {
        let line = meminfo.lines().find_map(|l| l.strip_prefix(key))?;
        line.trim().trim_end_matches("kB").trim().parse::<u64>().ok().map(|k| k * 1024)
    };
    let (ram_total, available) = (kb("MemTotal:"), kb("MemAvailable:"));
    NodeStats {
        ram_total,
        ram_used: ram_total.zip(available).map(|(t, a)| t.saturating_sub(a)),
        load: load_averages(&std::fs::read_to_string("/proc/loadavg").unwrap_or_default()),
        cpu_percent: cpu_times(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
            .map(busy_since_last),
    }
}

fn load_averages(text: &str) -> Option<[f64; 3]> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<f64>().ok());
    Some([fields.next()??, fields.next()??, fields.next()??])
}

/// (busy, all) jiffies from `/proc/stat`'s `cpu` line (idle and iowait are not busy).
fn cpu_times(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let times: Vec<u64> = line.split_whitespace().skip(1).filter_map(|t| t.parse().ok()).collect();
    let all: u64 = times.iter().take(8).sum();
    let idle = times.get(3)? + times.get(4).copied().unwrap_or(0);
    Some((all - idle, all))
}

fn busy_since_last((busy, all): (u64, u64)) -> u64 {
    let mut last = LAST_CPU.lock().unwrap_or_else(|p| p.into_inner());
    let (d_busy, d_all) = (busy.saturating_sub(last.0), all.saturating_sub(last.1));
    *last = (busy, all);
    (d_busy * 100).checked_div(d_all).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc_lines() {
        assert_eq!(load_averages("0.52 1.25 2.00 3/456 789\n"), Some([0.52, 1.25, 2.0]));
        assert_eq!(load_averages("garbage"), None);
        let stat = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n";
        assert_eq!(cpu_times(stat), Some((150, 1000)));
        assert_eq!(cpu_times("intr 1 2 3"), None);
    }
}
