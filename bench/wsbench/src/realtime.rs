//! `realtime`: SPIRIT's measurement. The engine serves an index of most of a
//! corpus (the base, copied to a scratch folder first) while the rest of the
//! corpus is added to it, and the suite measures, through the same protocol for
//! every engine (bench/PROTOCOL.md, `add` and `id` requests):
//!
//! - ingestion: documents acknowledged per second, `--window` adds in flight;
//! - visibility: from the acknowledgement of a sampled document (one in
//!   `--probe-every`) to the first answer to an `id` probe that finds it;
//! - query latency, open loop (Poisson arrivals, measured from each query's
//!   scheduled arrival), in three phases: idle before the ingestion, during it,
//!   and idle after it.
//!
//! Probing: each sampled document is probed as soon as its acknowledgement
//! arrives, by the thread that reads the engine's answers (so a busy driver
//! loop cannot delay it). A probe that finds nothing is repeated every `--retry-ms` for the
//! oldest unfound document only; once that one is found, every later unfound
//! document is probed at once. This keeps a slow refresh (Lucene's reopen every
//! second) from flooding the engine with probes, and it is exact for engines
//! that make documents visible in the order they were acknowledged (both
//! Needle and Lucene's near-real-time reopen do). The round trip of a probe
//! (`probe_rtt`) is the floor of what this can measure.

use std::collections::{HashMap, VecDeque};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use hdrhistogram::Histogram;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::engine::{EngineProcess, EngineSpec, Reply};
use crate::load::{new_histogram, query_at, shuffled_order, Latency};
use crate::util::{create_output, read_lines, Result};
use crate::workload::Workload;

/// A live engine on a copy of an index, the documents written to it, and the
/// queries searched meanwhile (`realtime` and `updates`).
#[derive(Args, Debug, Clone)]
pub struct LiveArgs {
    /// needle or lucene.
    #[command(flatten)]
    pub spec: EngineSpec,
    /// The engine's index of the base documents; it is copied, never changed.
    #[arg(long)]
    pub base_index: PathBuf,
    /// Scratch folder the base index is copied to (replaced).
    #[arg(long)]
    pub work_dir: PathBuf,
    /// JSON lines (each with a string `id`): added (`realtime`) or updated (`updates`).
    #[arg(long)]
    pub docs: PathBuf,
    /// Queries (a workload file; categories are mixed).
    #[arg(long)]
    pub workload: PathBuf,
}

impl LiveArgs {
    /// The workload's queries, categories mixed.
    pub fn queries(&self) -> Result<Vec<String>> {
        Ok(Workload::read(&self.workload)?.queries.into_iter().map(|(_, q)| q).collect())
    }
}

#[derive(Args, Debug, Clone)]
pub struct RealtimeArgs {
    /// The engine (`--engine-arg=--live` makes it take `add` and `id` requests), its
    /// index, the documents to add and the queries.
    #[command(flatten)]
    pub live: LiveArgs,
    /// Offered query rate (queries/s, Poisson arrivals) in every phase.
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Seconds of queries before timing starts (not recorded).
    #[arg(long, default_value_t = 3.0)]
    pub warmup: f64,
    /// Seconds of each idle phase (before and after the ingestion).
    #[arg(long, default_value_t = 10.0)]
    pub idle: f64,
    /// Probe one document in this many.
    #[arg(long, default_value_t = 50)]
    pub probe_every: u64,
    /// Documents offered per second (0: as fast as the engine acknowledges them).
    #[arg(long, default_value_t = 0.0)]
    pub ingest_rate: f64,
    /// Adds sent and not yet acknowledged, at most.
    #[arg(long, default_value_t = 64)]
    pub window: usize,
    /// Milliseconds between probes of a document not yet visible.
    #[arg(long, default_value_t = 1.0)]
    pub retry_ms: f64,
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 900)]
    pub ready_timeout: u64,
    /// Write the JSON result here (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PhaseResult {
    pub seconds: f64,
    pub completed: u64,
    pub errors: u64,
    pub unanswered: u64,
    pub latency: Latency,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RealtimeResult {
    /// "realtime".
    pub kind: String,
    pub engine: String,
    pub label: String,
    pub engine_args: Vec<String>,
    pub ready: serde_json::Value,
    pub docs: u64,
    pub add_errors: u64,
    pub ingest_seconds: f64,
    pub ingest_docs_per_sec: f64,
    /// Acknowledgement to the first probe answer that finds the document.
    pub visibility: Latency,
    /// Sampled documents never found.
    pub visibility_unresolved: u64,
    pub probes_sent: u64,
    /// Round trip of a probe: the floor of the visibility figures.
    pub probe_rtt: Latency,
    pub offered_rate: f64,
    /// Documents offered per second (0: as fast as acknowledged).
    pub ingest_rate: f64,
    pub idle_before: PhaseResult,
    pub ingesting: PhaseResult,
    pub idle_after: PhaseResult,
    pub engine_stats: serde_json::Value,
    pub unix_time: u64,
}

const ADD: u64 = 1 << 40;
const PROBE: u64 = 2 << 40;
const KIND_MASK: u64 = !((1 << 40) - 1);

type Input = Arc<Mutex<BufWriter<ChildStdin>>>;

fn send_line(input: &Input, line: &str) -> std::io::Result<()> {
    let mut w = input.lock().unwrap();
    w.write_all(line.as_bytes())?;
    w.flush()
}

/// The documents to add: (id, JSON line).
pub(crate) fn read_docs(path: &Path) -> Result<Vec<(String, String)>> {
    read_lines(path)?
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let v: serde_json::Value =
                serde_json::from_str(&line).map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
            let id = v["id"]
                .as_str()
                .ok_or_else(|| format!("{} line {}: no string `id`", path.display(), i + 1))?;
            Ok((id.to_string(), line))
        })
        .collect()
}

/// Replaces `to` with a copy of the flat folder `from`.
pub(crate) fn copy_index(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to)?;
    }
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            return Err(format!("{}: the index folder holds a folder", e.path().display()).into());
        }
        std::fs::copy(e.path(), to.join(e.file_name()))?;
    }
    Ok(())
}

/// Sends queries at Poisson arrivals until `stop`; each one's schedule goes to `scheduled` first.
fn spawn_queries(
    input: Input,
    queries: Vec<String>,
    o: (f64, usize, u64),
    start: Instant,
    scheduled: Sender<(u64, Instant)>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<std::io::Result<()>> {
    let (rate, k, seed) = o;
    std::thread::spawn(move || {
        let order = shuffled_order(queries.len(), seed);
        let mut rng = StdRng::seed_from_u64(seed ^ 0x7ea1_7143);
        let mut t = 0.0;
        for i in 0u64.. {
            t += -rng.gen_range(f64::MIN_POSITIVE..1.0f64).ln() / rate;
            let at = start + Duration::from_secs_f64(t);
            while Instant::now() < at {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                std::thread::sleep((at - Instant::now()).min(Duration::from_millis(50)));
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let _ = scheduled.send((i, at));
            send_line(&input, &format!("{i}\ttop\t{k}\t{}\n", query_at(&queries, &order, i)))?;
        }
        Ok(())
    })
}

/// Sends every document as an `add`, at most as many unacknowledged as `credits`
/// allows and, with a `rate`, none before its time.
fn spawn_ingest(
    input: Input,
    docs: Arc<Vec<(String, String)>>,
    credits: Receiver<()>,
    rate: f64,
) -> std::thread::JoinHandle<std::io::Result<()>> {
    std::thread::spawn(move || {
        let start = Instant::now();
        for (n, (_, json)) in docs.iter().enumerate() {
            if rate > 0.0 {
                let due = start + Duration::from_secs_f64(n as f64 / rate);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            if credits.recv().is_err() {
                return Ok(());
            }
            send_line(&input, &format!("{}\tadd\t0\t{json}\n", ADD | n as u64))?;
        }
        Ok(())
    })
}

struct Pending {
    doc: u64,
    acked: Instant,
    in_flight: bool,
}

/// First probes sent by the reader thread: document -> (probe request id, when sent).
type FirstProbes = Arc<Mutex<HashMap<u64, (u64, Instant)>>>;

/// Sends the first probe of each sampled document the moment its acknowledgement arrives.
fn first_probe_hook(
    input: Input,
    ids: Arc<Vec<(String, String)>>,
    probe_every: u64,
    next: Arc<AtomicU64>,
    first: FirstProbes,
) -> crate::engine::AnswerHook {
    Box::new(move |id, _at| {
        let doc = id & !KIND_MASK;
        if id & KIND_MASK != ADD || !doc.is_multiple_of(probe_every) {
            return;
        }
        let req = PROBE | next.fetch_add(1, Ordering::Relaxed);
        first.lock().unwrap().insert(doc, (req, Instant::now()));
        let _ = send_line(&input, &format!("{req}\tid\t0\t{}\n", ids[doc as usize].0));
    })
}

/// The probes of sampled documents (see the module documentation).
struct Prober {
    input: Input,
    pending: VecDeque<Pending>,
    /// Probe request id -> (document, when sent).
    sent: HashMap<u64, (u64, Instant)>,
    first: FirstProbes,
    next: Arc<AtomicU64>,
    retry_at: Option<Instant>,
    retry: Duration,
    visibility: Histogram<u64>,
    rtt: Histogram<u64>,
}

impl Prober {
    fn probe(&mut self, i: usize, ids: &[(String, String)]) -> Result<()> {
        let p = &mut self.pending[i];
        p.in_flight = true;
        let req = PROBE | self.next.fetch_add(1, Ordering::Relaxed);
        self.sent.insert(req, (p.doc, Instant::now()));
        send_line(&self.input, &format!("{req}\tid\t0\t{}\n", ids[p.doc as usize].0))?;
        Ok(())
    }

    /// A sampled document was acknowledged (and its first probe sent by the hook, if there is one).
    fn acked(&mut self, doc: u64, at: Instant, ids: &[(String, String)]) -> Result<()> {
        let first = self.first.lock().unwrap().remove(&doc);
        self.pending.push_back(Pending { doc, acked: at, in_flight: first.is_some() });
        match first {
            Some((req, sent)) => {
                self.sent.insert(req, (doc, sent));
            }
            None if self.pending.len() == 1 => self.probe(0, ids)?,
            None => {}
        }
        Ok(())
    }

    fn answered(&mut self, req: u64, at: Instant, found: bool, ids: &[(String, String)]) -> Result<()> {
        let Some((doc, sent)) = self.sent.remove(&req) else { return Ok(()) };
        record(&mut self.rtt, at.saturating_duration_since(sent));
        let Some(i) = self.pending.iter().position(|p| p.doc == doc) else { return Ok(()) };
        if !found {
            self.pending[i].in_flight = false;
            if i == 0 {
                self.retry_at = Some(at + self.retry);
            }
            return Ok(());
        }
        let p = self.pending.remove(i).expect("position is in range");
        record(&mut self.visibility, at.saturating_duration_since(p.acked));
        if i == 0 {
            self.retry_at = None;
            for j in 0..self.pending.len() {
                if !self.pending[j].in_flight {
                    self.probe(j, ids)?;
                }
            }
        }
        Ok(())
    }

    fn tick(&mut self, now: Instant, ids: &[(String, String)]) -> Result<()> {
        if self.retry_at.is_some_and(|t| now >= t) {
            self.retry_at = None;
            if self.pending.front().is_some_and(|p| !p.in_flight) {
                self.probe(0, ids)?;
            }
        }
        Ok(())
    }
}

fn record(h: &mut Histogram<u64>, d: Duration) {
    h.saturating_record(d.as_micros().max(1) as u64);
}

/// Query latencies by phase: idle before, ingesting, idle after.
struct Phases {
    timed_from: Instant,
    ingest_start: Option<Instant>,
    ingest_end: Option<Instant>,
    end: Option<Instant>,
    hist: [Histogram<u64>; 3],
    results: [PhaseResult; 3],
}

impl Phases {
    fn of(&self, scheduled: Instant) -> Option<usize> {
        if scheduled < self.timed_from {
            return None;
        }
        if self.ingest_start.is_none_or(|t| scheduled < t) {
            return Some(0);
        }
        if self.ingest_end.is_none_or(|t| scheduled < t) {
            return Some(1);
        }
        self.end.is_none_or(|t| scheduled < t).then_some(2)
    }

    /// Records the answer to a query scheduled at `scheduled` (arriving `at`) in its phase.
    fn answered(&mut self, scheduled: Instant, at: Instant, ok: bool) {
        let Some(p) = self.of(scheduled) else { return };
        if ok {
            self.results[p].completed += 1;
            record(&mut self.hist[p], at.saturating_duration_since(scheduled));
        } else {
            self.results[p].errors += 1;
        }
    }
}

pub fn realtime(a: &RealtimeArgs) -> Result<RealtimeResult> {
    let docs = Arc::new(read_docs(&a.live.docs)?);
    if docs.is_empty() {
        return Err(format!("{}: no documents to add", a.live.docs.display()).into());
    }
    let queries = a.live.queries()?;
    if queries.is_empty() || a.rate <= 0.0 {
        return Err("the workload needs queries and the rate must be positive".into());
    }
    copy_index(&a.live.base_index, &a.live.work_dir)?;
    let cmd = a.live.spec.command()?;
    let label = a.live.spec.label();
    eprintln!(
        "starting {label}: {} --index {} {}",
        cmd.join(" "),
        a.live.work_dir.display(),
        a.live.spec.engine_arg.join(" ")
    );
    let mut engine = EngineProcess::start(
        &cmd,
        &a.live.work_dir,
        1,
        &a.live.spec.engine_arg,
        None,
        Duration::from_secs(a.ready_timeout),
    )?;
    eprintln!("ready: {}", engine.ready);
    let input: Input = Arc::new(Mutex::new(engine.take_input().ok_or("the engine's input is closed")?));

    let start = Instant::now() + Duration::from_millis(20);
    let timed_from = start + Duration::from_secs_f64(a.warmup);
    let idle = Duration::from_secs_f64(a.idle);
    let ingest_at = timed_from + idle;
    let stop = Arc::new(AtomicBool::new(false));
    let (sched_tx, sched_rx) = unbounded();
    let querier = spawn_queries(input.clone(), queries, (a.rate, a.k, a.seed), start, sched_tx, stop.clone());
    let (credit_tx, credit_rx) = bounded(a.window.max(1));
    for _ in 0..a.window.max(1) {
        credit_tx.send(()).expect("the channel has room");
    }
    let mut ingest = None;
    let first: FirstProbes = Arc::default();
    let next_probe = Arc::new(AtomicU64::new(0));
    let probe_every = a.probe_every.max(1);
    engine.on_answer(first_probe_hook(
        input.clone(),
        docs.clone(),
        probe_every,
        next_probe.clone(),
        first.clone(),
    ));
    let mut prober = Prober {
        input: input.clone(),
        pending: VecDeque::new(),
        sent: HashMap::new(),
        first,
        next: next_probe,
        retry_at: None,
        retry: Duration::from_secs_f64(a.retry_ms / 1e3),
        visibility: new_histogram(),
        rtt: new_histogram(),
    };
    let mut phases = Phases {
        timed_from,
        ingest_start: None,
        ingest_end: None,
        end: None,
        hist: [new_histogram(), new_histogram(), new_histogram()],
        results: Default::default(),
    };
    let mut scheduled: HashMap<u64, Instant> = HashMap::new();
    let (mut acks, mut add_errors) = (0u64, 0u64);
    let total_docs = docs.len() as u64;
    loop {
        let now = Instant::now();
        if ingest.is_none() && now >= ingest_at {
            phases.ingest_start = Some(now);
            ingest = Some(spawn_ingest(input.clone(), docs.clone(), credit_rx.clone(), a.ingest_rate));
        }
        if phases.end.is_some_and(|t| now >= t) {
            break;
        }
        prober.tick(now, &docs)?;
        let reply = match engine.recv(Duration::from_micros(200)) {
            Ok(r) => r,
            Err(_) => continue,
        };
        let (id, at, total, ok) = match reply {
            Reply::Answer { id, at, total, .. } => (id, at, total, true),
            Reply::Error { id, at, message } => {
                eprintln!("engine error for request {id}: {message}");
                (id, at, 0, false)
            }
            Reply::Stats(_) => continue,
            Reply::Closed => return Err("the engine exited during the run".into()),
        };
        match id & KIND_MASK {
            ADD => {
                let _ = credit_tx.try_send(());
                acks += 1;
                if !ok {
                    add_errors += 1;
                }
                let n = id & !KIND_MASK;
                if ok && n.is_multiple_of(probe_every) {
                    prober.acked(n, at, &docs)?;
                }
                if acks == total_docs {
                    phases.ingest_end = Some(at);
                    phases.end = Some(at + idle);
                }
            }
            PROBE => prober.answered(id, at, ok && total > 0, &docs)?,
            _ => {
                scheduled.extend(sched_rx.try_iter());
                if let Some(s) = scheduled.remove(&id) {
                    phases.answered(s, at, ok);
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    querier.join().map_err(|_| "the query thread panicked")??;
    if let Some(h) = ingest {
        h.join().map_err(|_| "the ingest thread panicked")??;
    }
    // Queries still out: wait a little, then count them with the time waited.
    let drain_until = Instant::now() + Duration::from_secs(5);
    scheduled.extend(sched_rx.try_iter());
    while !scheduled.is_empty() && Instant::now() < drain_until {
        let (id, at, ok) = match engine.recv(Duration::from_millis(50)) {
            Ok(Reply::Answer { id, at, .. }) => (id, at, true),
            Ok(Reply::Error { id, at, .. }) => (id, at, false),
            _ => continue,
        };
        if let Some(s) = scheduled.remove(&id) {
            phases.answered(s, at, ok);
        }
    }
    let now = Instant::now();
    for s in scheduled.values() {
        if let Some(p) = phases.of(*s) {
            phases.results[p].unanswered += 1;
            record(&mut phases.hist[p], now.saturating_duration_since(*s));
        }
    }
    let (visibility, probe_rtt) =
        (Latency::from_histogram(&prober.visibility), Latency::from_histogram(&prober.rtt));
    let (visibility_unresolved, probes_sent) =
        (prober.pending.len() as u64, prober.next.load(Ordering::Relaxed));
    drop(prober);
    engine.on_answer(Box::new(|_, _| {}));
    let input = Arc::try_unwrap(input).map_err(|_| "the input is still shared")?.into_inner().unwrap();
    engine.put_input(input);
    let (ingest_start, ingest_end) = (phases.ingest_start.unwrap_or(now), phases.ingest_end.unwrap_or(now));
    let spans = [
        ingest_start.saturating_duration_since(timed_from),
        ingest_end.saturating_duration_since(ingest_start),
        idle,
    ];
    for (p, span) in spans.iter().enumerate() {
        phases.results[p].seconds = span.as_secs_f64();
        phases.results[p].latency = Latency::from_histogram(&phases.hist[p]);
    }
    let engine_stats = engine.stats(Duration::from_secs(60)).unwrap_or(serde_json::Value::Null);
    let ingest_seconds = spans[1].as_secs_f64();
    let [idle_before, ingesting, idle_after] = phases.results;
    let result = RealtimeResult {
        kind: "realtime".into(),
        engine: a.live.spec.engine.clone(),
        label,
        engine_args: a.live.spec.engine_arg.clone(),
        ready: engine.ready.clone(),
        docs: total_docs,
        add_errors,
        ingest_seconds,
        ingest_docs_per_sec: total_docs as f64 / ingest_seconds.max(1e-9),
        visibility,
        visibility_unresolved,
        probes_sent,
        probe_rtt,
        offered_rate: a.rate,
        ingest_rate: a.ingest_rate,
        idle_before,
        ingesting,
        idle_after,
        engine_stats,
        unix_time: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    };
    engine.finish()?;
    let text = serde_json::to_string_pretty(&result)?;
    match &a.out {
        Some(p) => writeln!(create_output(p)?, "{text}")?,
        None => println!("{text}"),
    }
    eprintln!("{}", summary(&result));
    Ok(result)
}

/// One line for the console.
pub fn summary(r: &RealtimeResult) -> String {
    format!(
        "{}: {} docs at {:.0} docs/s; visibility p50 {:.3} ms p99 {:.3} ms (probe rtt p50 {:.3} ms); \
         query p99 idle {:.2} ms, ingesting {:.2} ms, after {:.2} ms",
        r.label,
        r.docs,
        r.ingest_docs_per_sec,
        r.visibility.p50_ms,
        r.visibility.p99_ms,
        r.probe_rtt.p50_ms,
        r.idle_before.latency.p99_ms,
        r.ingesting.latency.p99_ms,
        r.idle_after.latency.p99_ms
    )
}
