//! Load generation against one engine process: closed loop (T requests always
//! outstanding, as fast as the engine answers) and open loop (Poisson arrivals at
//! a fixed rate, one sender thread, latency measured from each query's scheduled
//! arrival so queueing counts). Latencies go into HDR histograms (1 us .. 1 h,
//! 3 significant digits); storage reads and CPU are sampled from /proc over the
//! timed phase.

pub mod closed;
pub mod open;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::procstat::ProcCounters;

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    /// Absent from results written before it was added.
    #[serde(default)]
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

impl Latency {
    pub fn from_histogram(h: &Histogram<u64>) -> Latency {
        let ms = |us: u64| us as f64 / 1e3;
        Latency {
            count: h.len(),
            mean_ms: h.mean() / 1e3,
            p50_ms: ms(h.value_at_quantile(0.5)),
            p90_ms: ms(h.value_at_quantile(0.9)),
            p95_ms: ms(h.value_at_quantile(0.95)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            p999_ms: ms(h.value_at_quantile(0.999)),
            max_ms: ms(h.max()),
        }
    }
}

/// What one timed phase measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoadResult {
    /// "closed" or "open".
    pub mode: String,
    /// Closed loop: outstanding requests.
    pub clients: usize,
    /// Open loop: offered arrivals per second.
    pub offered_rate: f64,
    pub completed: u64,
    pub errors: u64,
    /// Open loop: requests still unanswered when the drain timed out (their
    /// latency is recorded as at least the time waited).
    pub unanswered: u64,
    pub elapsed_s: f64,
    pub qps: f64,
    pub latency: Latency,
    pub read_bytes: u64,
    pub read_bytes_per_query: f64,
    pub cpu_seconds: f64,
    pub cpu_ms_per_query: f64,
}

impl LoadResult {
    pub fn finish(&mut self, h: &Histogram<u64>, proc_delta: ProcCounters) {
        self.latency = Latency::from_histogram(h);
        self.qps = if self.elapsed_s > 0.0 { self.completed as f64 / self.elapsed_s } else { 0.0 };
        self.read_bytes = proc_delta.read_bytes;
        self.cpu_seconds = proc_delta.cpu_seconds;
        let n = self.completed.max(1) as f64;
        self.read_bytes_per_query = proc_delta.read_bytes as f64 / n;
        self.cpu_ms_per_query = proc_delta.cpu_seconds * 1e3 / n;
    }
}

/// The query sent as the `i`-th request: the workload's queries in a fixed
/// shuffled order, cycling.
/// What a timed run keeps of a reply: `Ok(None)` for a STATS line, else
/// (request id, arrival, answered without error); the first few errors are printed.
pub fn classify(
    reply: crate::engine::Reply,
    errors_so_far: u64,
) -> crate::util::Result<Option<(u64, std::time::Instant, bool)>> {
    use crate::engine::Reply;
    Ok(match reply {
        Reply::Answer { id, at, .. } => Some((id, at, true)),
        Reply::Error { id, at, message } => {
            if errors_so_far < 5 {
                eprintln!("engine error: {message}");
            }
            Some((id, at, false))
        }
        Reply::Stats(_) => None,
        Reply::Closed => return Err("the engine exited during the run".into()),
    })
}

pub fn query_at<'a>(queries: &'a [String], order: &[usize], i: u64) -> &'a str {
    &queries[order[(i % order.len() as u64) as usize]]
}

pub fn shuffled_order(n: usize, seed: u64) -> Vec<usize> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut v: Vec<usize> = (0..n).collect();
    v.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
    v
}
