//! `run` and `capacity`: start an engine (in a memory cgroup and after dropping
//! caches when asked), validate its answers, then time each workload category in
//! a closed or open loop (or, for `capacity`, raise an open-loop rate step by
//! step until p99 passes a bound) and write the results as JSON.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::cgroup::{drop_caches, MemCgroup};
use crate::engine::{EngineProcess, EngineSpec};
use crate::load::{closed, open, LoadResult};
use crate::util::{create_output, parse_size, Result};
use crate::validate::{self, Comparison};
use crate::workload::Workload;

#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    #[command(flatten)]
    pub spec: EngineSpec,
    #[arg(long)]
    pub index: PathBuf,
    #[arg(long)]
    pub workload: PathBuf,
    /// Engine search threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Run the engine inside a memory cgroup of this size (e.g. 512MB).
    #[arg(long, value_parser = parse_size)]
    pub mem_limit: Option<u64>,
    /// Drop the page cache before starting the engine and again after validation (needs root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Only categories whose name contains this string.
    #[arg(long)]
    pub category: Option<String>,
    /// Hits per query.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Skip the validation pass.
    #[arg(long)]
    pub no_validate: bool,
    /// Where validation answers are kept (and compared across engines).
    #[arg(long, default_value = "bench/results/answers")]
    pub answers_dir: PathBuf,
    /// Seconds to wait for the engine's READY.
    #[arg(long, default_value_t = 900)]
    pub ready_timeout: u64,
    /// Write the JSON result here (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub e: EngineArgs,
    /// closed (T requests outstanding) or open (Poisson arrivals at --rate).
    #[arg(long, default_value = "closed")]
    pub mode: String,
    /// Closed loop: outstanding requests.
    #[arg(long, default_value_t = 1)]
    pub clients: usize,
    /// Open loop: arrivals per second.
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Seconds of warm-up per category (not recorded).
    #[arg(long, default_value_t = 5.0)]
    pub warmup: f64,
    /// Seconds timed per category.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Closed loop: also stop a category after this many timed queries (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub max_queries: u64,
    /// Time the whole workload as one mixed category `all` instead of category by category.
    #[arg(long)]
    pub mix: bool,
}

#[derive(Args, Debug, Clone)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub e: EngineArgs,
    /// First offered rate (queries/s).
    #[arg(long, default_value_t = 10.0)]
    pub start_rate: f64,
    /// Each step multiplies the rate by this.
    #[arg(long, default_value_t = 1.25)]
    pub factor: f64,
    /// The p99 bound in milliseconds.
    #[arg(long, default_value_t = 100.0)]
    pub p99_ms: f64,
    #[arg(long, default_value_t = 3.0)]
    pub warmup: f64,
    /// Seconds timed per step.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    #[arg(long, default_value_t = 30)]
    pub max_steps: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CategoryResult {
    pub category: String,
    pub distinct_queries: usize,
    pub load: LoadResult,
    pub engine_stats: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// "run" or "capacity".
    pub kind: String,
    pub engine: String,
    pub label: String,
    pub ready: serde_json::Value,
    pub index: String,
    pub workload: String,
    pub mode: String,
    pub threads: usize,
    pub mem_limit: Option<u64>,
    pub drop_caches: bool,
    pub unix_time: u64,
    pub categories: Vec<CategoryResult>,
    pub validation: Vec<Comparison>,
    pub cgroup: Option<serde_json::Value>,
    /// capacity: the p99 bound (ms) and the highest offered rate whose p99 stayed under it.
    pub p99_bound_ms: Option<f64>,
    pub capacity_qps: Option<f64>,
}

struct Session {
    engine: EngineProcess,
    workload: Workload,
    result: RunResult,
}

/// Starts the engine: in a fresh memory cgroup when limited, after dropping caches when asked.
fn launch(e: &EngineArgs, cmd: &[String], label: &str) -> Result<EngineProcess> {
    let cgroup = match e.mem_limit {
        Some(limit) => Some(MemCgroup::create(&format!("wsbench-{}", std::process::id()), limit)?),
        None => None,
    };
    if e.drop_caches {
        drop_caches()?;
    }
    eprintln!("starting {label}: {} --index {} --threads {}", cmd.join(" "), e.index.display(), e.threads);
    let engine = EngineProcess::start(
        cmd,
        &e.index,
        e.threads,
        &e.spec.engine_arg,
        cgroup,
        Duration::from_secs(e.ready_timeout),
    )?;
    eprintln!("ready: {}", engine.ready);
    Ok(engine)
}

fn start(e: &EngineArgs, mode: &str, kind: &str) -> Result<Session> {
    let workload = Workload::read(&e.workload)?;
    let cmd = e.spec.command()?;
    let label = e.spec.label();
    let mut engine = launch(e, &cmd, &label)?;
    let mut validation = Vec::new();
    if !e.no_validate {
        let t = std::time::Instant::now();
        let answers = validate::answer_all(&mut engine, &workload.queries, e.k)?;
        let errors = answers.iter().filter(|a| matches!(a, validate::Answer::Error(_))).count();
        let path = validate::answers_path(&e.answers_dir, &label, &workload.name);
        validate::write_answers(&path, &workload.queries, &answers)?;
        eprintln!(
            "validation: {} queries answered in {:.1} s ({errors} errors), answers in {}",
            answers.len(),
            t.elapsed().as_secs_f64(),
            path.display()
        );
        validation = validate::compare_all(&e.answers_dir, &label, &workload.name)?;
        if e.drop_caches || e.mem_limit.is_some() {
            // Validation warmed the engine (and mapped pages survive a cache drop):
            // time a fresh process.
            engine.finish()?;
            engine = launch(e, &cmd, &label)?;
        }
    }
    let result = RunResult {
        kind: kind.into(),
        engine: e.spec.engine.clone(),
        label,
        ready: engine.ready.clone(),
        index: e.index.display().to_string(),
        workload: workload.name.clone(),
        mode: mode.into(),
        threads: e.threads,
        mem_limit: e.mem_limit,
        drop_caches: e.drop_caches,
        unix_time: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        categories: Vec::new(),
        validation,
        cgroup: None,
        p99_bound_ms: None,
        capacity_qps: None,
    };
    Ok(Session { engine, workload, result })
}

fn selected(w: &Workload, filter: Option<&str>, mix: bool) -> Vec<(String, Vec<String>)> {
    let cats: Vec<(String, Vec<String>)> =
        w.categories().into_iter().filter(|(c, _)| filter.is_none_or(|f| c.contains(f))).collect();
    if mix {
        vec![("all".to_string(), cats.into_iter().flat_map(|(_, q)| q).collect())]
    } else {
        cats
    }
}

fn finish(mut s: Session, out: Option<&PathBuf>) -> Result<RunResult> {
    s.result.cgroup = s.engine.cgroup.as_ref().map(|c| c.counters());
    s.engine.finish()?;
    let json = serde_json::to_string_pretty(&s.result)?;
    match out {
        Some(p) => {
            let mut w = create_output(p)?;
            w.write_all(json.as_bytes())?;
            w.write_all(b"\n")?;
            w.flush()?;
            eprintln!("wrote {}", p.display());
        }
        None => println!("{json}"),
    }
    Ok(s.result)
}

use std::io::Write;

fn print_row(label: &str, cat: &str, r: &LoadResult) {
    eprintln!(
        "{label:<14} {cat:<18} {:>9.1} qps  p50 {:>8.3} ms  p90 {:>8.3}  p99 {:>8.3}  p99.9 {:>8.3}  max {:>8.3}  {:>10.0} B/q read  {:>6.3} ms cpu/q{}",
        r.qps,
        r.latency.p50_ms,
        r.latency.p90_ms,
        r.latency.p99_ms,
        r.latency.p999_ms,
        r.latency.max_ms,
        r.read_bytes_per_query,
        r.cpu_ms_per_query,
        if r.unanswered > 0 { format!("  ({} unanswered)", r.unanswered) } else { String::new() }
    );
}

pub fn run(a: &RunArgs) -> Result<RunResult> {
    if a.mode != "closed" && a.mode != "open" {
        return Err(format!("--mode must be closed or open, not `{}`", a.mode).into());
    }
    let mut s = start(&a.e, &a.mode, "run")?;
    let cats = selected(&s.workload, a.e.category.as_deref(), a.mix);
    for (cat, queries) in cats {
        let load = if a.mode == "closed" {
            closed::run(
                &mut s.engine,
                &queries,
                &closed::ClosedOptions {
                    clients: a.clients,
                    warmup: Duration::from_secs_f64(a.warmup),
                    duration: Duration::from_secs_f64(a.duration),
                    k: a.e.k,
                    seed: a.e.seed,
                    max_queries: a.max_queries,
                },
            )?
        } else {
            open::run(
                &mut s.engine,
                &queries,
                &open::OpenOptions {
                    rate: a.rate,
                    warmup: Duration::from_secs_f64(a.warmup),
                    duration: Duration::from_secs_f64(a.duration),
                    k: a.e.k,
                    seed: a.e.seed,
                    drain: Duration::from_secs(30),
                },
            )?
        };
        let stats = s.engine.stats(Duration::from_secs(600))?;
        print_row(&s.result.label, &cat, &load);
        s.result.categories.push(CategoryResult {
            category: cat,
            distinct_queries: queries.len(),
            load,
            engine_stats: stats,
        });
    }
    finish(s, a.e.out.as_ref())
}

pub fn capacity(a: &CapacityArgs) -> Result<RunResult> {
    let mut s = start(&a.e, "open", "capacity")?;
    s.result.p99_bound_ms = Some(a.p99_ms);
    let queries: Vec<String> =
        selected(&s.workload, a.e.category.as_deref(), true).into_iter().flat_map(|(_, q)| q).collect();
    let mut rate = a.start_rate;
    let mut held: Option<f64> = None;
    for step in 0..a.max_steps {
        let load = open::run(
            &mut s.engine,
            &queries,
            &open::OpenOptions {
                rate,
                warmup: Duration::from_secs_f64(a.warmup),
                duration: Duration::from_secs_f64(a.duration),
                k: a.e.k,
                seed: a.e.seed + step as u64,
                drain: Duration::from_secs(10),
            },
        )?;
        // Let any backlog drain before the next step.
        let stats = s.engine.stats(Duration::from_secs(600))?;
        print_row(&s.result.label, &format!("{rate:.1}/s"), &load);
        let ok = load.latency.p99_ms <= a.p99_ms && load.unanswered == 0 && load.errors == 0;
        s.result.categories.push(CategoryResult {
            category: format!("rate_{rate:.1}"),
            distinct_queries: queries.len(),
            load,
            engine_stats: stats,
        });
        if !ok {
            break;
        }
        held = Some(rate);
        rate *= a.factor;
    }
    s.result.capacity_qps = held;
    eprintln!(
        "capacity of {}: {} (p99 bound {} ms)",
        s.result.label,
        held.map_or("below the first rate".to_string(), |r| format!("{r:.1} queries/s")),
        a.p99_ms
    );
    finish(s, a.e.out.as_ref())
}
