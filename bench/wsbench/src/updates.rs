//! `updates`: seed 002's benchmark of updating documents while searching.
//! The engine serves a copy of an index of a corpus with a numeric
//! `last_modified` and a binary `title_dv` (`needle-bench with-values`);
//! `--search-clients` closed-loop clients search it sorted by `last_modified`
//! (newest first), and documents are updated at a fixed rate, each by one
//! method: `reindex` (the whole document again, `add`), `numeric` (the
//! `last_modified` doc value in place) or `binary` (the `title_dv` doc value
//! in place). Lucene's reader is reopened every `--reopen-s` seconds (its
//! updates are searchable only then); Needle's are searchable when
//! acknowledged, so it has no reopen and runs once per rate.
//!
//! For each combination, as the seed reports them: reopen ms (the average
//! time of one reopen), update ms (time inside the update calls, per reopen
//! interval), per-document ms ((update + reopen time) / documents updated),
//! and search QPS while updating beside QPS before it (idle). The engine
//! measures the times itself (its `STATS`: `updates`, `update_ms`, `reopens`,
//! `reopen_ms`, and the same in the CPU time of the threads that did them:
//! `update_cpu_ms`, `reopen_cpu_ms`; diffed over the update phase). Needle's figure does not
//! include its background commits, which write the updates to disk (Lucene's
//! near-real-time mode does not commit either).

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ChildStdin;
use std::time::{Duration, Instant};

use clap::Args;
use hdrhistogram::Histogram;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::engine::{EngineProcess, Reply};
use crate::load::{new_histogram, query_at, shuffled_order};
use crate::realtime::{copy_index, read_docs, LiveArgs};
use crate::util::{create_output, Result};

#[derive(Args, Debug, Clone)]
pub struct UpdatesArgs {
    /// The engine (`--live` is added; Lucene also gets `--reopen-ms`), its index of the
    /// corpus with values, that corpus (the documents updated, picked at random) and
    /// the queries (run sorted by `last_modified`).
    #[command(flatten)]
    pub live: LiveArgs,
    /// Update methods: reindex, numeric, binary.
    #[arg(long, value_delimiter = ',', default_value = "reindex,numeric,binary")]
    pub methods: Vec<String>,
    /// Documents updated per second.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100,1000")]
    pub rates: Vec<f64>,
    /// Lucene's reopen intervals, seconds (Needle has none).
    #[arg(long, value_delimiter = ',', default_value = "1,2,5")]
    pub reopen_s: Vec<f64>,
    /// Seconds of updates timed per combination.
    #[arg(long, default_value_t = 30.0)]
    pub duration: f64,
    /// Seconds of searches before anything is timed.
    #[arg(long, default_value_t = 5.0)]
    pub warmup: f64,
    /// Seconds of searches without updates, timed (the idle QPS).
    #[arg(long, default_value_t = 5.0)]
    pub idle: f64,
    /// Searches outstanding at once (and the engine's search threads).
    #[arg(long, default_value_t = 2)]
    pub search_clients: usize,
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[arg(long, default_value_t = 300)]
    pub ready_timeout: u64,
    /// JSON results (one object per combination).
    #[arg(long)]
    pub out: PathBuf,
}

/// One combination's figures.
#[derive(Debug, Serialize)]
pub struct UpdatesResult {
    pub engine: String,
    pub method: String,
    pub rate: f64,
    /// Lucene's reopen interval; `None` for Needle.
    pub reopen_s: Option<f64>,
    pub updated: u64,
    pub reopens: u64,
    pub reopen_ms: f64,
    /// Time inside update calls per reopen interval (per second for Needle).
    pub update_ms: f64,
    pub total_ms: f64,
    pub per_doc_ms: f64,
    /// The same in CPU time of the threads doing the updates and reopens
    /// (what a busy machine's wall clock adds is left out).
    pub per_doc_cpu_ms: f64,
    pub qps_idle: f64,
    pub qps_updating: f64,
    /// Acknowledgement latency of the updates, microseconds: p50, p99, max.
    pub ack_us: [u64; 3],
    /// Updates the engine refused.
    pub errors: u64,
}

pub fn updates(a: &UpdatesArgs) -> Result<Vec<UpdatesResult>> {
    let docs = read_docs(&a.live.docs)?;
    let queries = a.live.queries()?;
    if docs.is_empty() || queries.is_empty() {
        return Err("updates needs documents and queries".into());
    }
    let reopens: Vec<Option<f64>> = match a.live.spec.engine.as_str() {
        "lucene" => a.reopen_s.iter().map(|&s| Some(s)).collect(),
        _ => vec![None],
    };
    let mut out = Vec::new();
    for method in &a.methods {
        if !["reindex", "numeric", "binary"].contains(&method.as_str()) {
            return Err(format!("unknown method `{method}` (reindex, numeric, binary)").into());
        }
        for &rate in &a.rates {
            for &reopen in &reopens {
                let r = one(a, &docs, &queries, method, rate, reopen)?;
                eprintln!(
                    "{} {method} {rate}/s reopen {:?}: reopen {:.1} ms, update {:.1} ms, per doc {:.4} ms ({:.4} CPU), \
                     QPS {:.0} (idle {:.0}), ack p50 {} us p99 {} us, {} updated, {} errors",
                    r.engine,
                    reopen,
                    r.reopen_ms,
                    r.update_ms,
                    r.per_doc_ms,
                    r.per_doc_cpu_ms,
                    r.qps_updating,
                    r.qps_idle,
                    r.ack_us[0],
                    r.ack_us[1],
                    r.updated,
                    r.errors
                );
                out.push(r);
            }
        }
    }
    let mut w = create_output(&a.out)?;
    serde_json::to_writer_pretty(&mut w, &out)?;
    writeln!(w)?;
    Ok(out)
}

/// The phases of one combination, in order.
#[derive(PartialEq, Clone, Copy, Debug)]
enum Phase {
    Warmup,
    Idle,
    /// Searches stop; STATS once none is outstanding.
    BeforeUpdates,
    Updating,
    /// Searches and updates stop; STATS once none is outstanding.
    AfterUpdates,
}

const UPDATE: u64 = 1 << 40;

fn one(
    a: &UpdatesArgs,
    docs: &[(String, String)],
    queries: &[String],
    method: &str,
    rate: f64,
    reopen: Option<f64>,
) -> Result<UpdatesResult> {
    copy_index(&a.live.base_index, &a.live.work_dir)?;
    let mut extra = a.live.spec.engine_arg.clone();
    extra.push("--live".into());
    if let Some(s) = reopen {
        extra.extend(["--reopen-ms".to_string(), ((s * 1000.0) as u64).to_string()]);
    }
    let cmd = a.live.spec.command()?;
    let mut engine = EngineProcess::start(
        &cmd,
        &a.live.work_dir,
        a.search_clients,
        &extra,
        None,
        Duration::from_secs(a.ready_timeout),
    )?;
    let mut input = engine.take_input().ok_or("the engine's input is closed")?;
    let order = shuffled_order(queries.len(), a.seed);
    let mut rng = StdRng::seed_from_u64(a.seed ^ 0x5eed);
    let mut next_query = 0u64;
    let mut search = |input: &mut BufWriter<ChildStdin>| -> std::io::Result<()> {
        let q = query_at(queries, &order, next_query);
        next_query += 1;
        writeln!(input, "{}\tsorted\t{}\t{q}", next_query, a.k)?;
        input.flush()
    };
    for _ in 0..a.search_clients {
        search(&mut input)?;
    }
    let (mut outstanding, mut answered) = (a.search_clients, 0u64);
    let mut phase = Phase::Warmup;
    let mut phase_start = Instant::now();
    let (mut idle_qps, mut updating_qps) = (0.0, 0.0);
    let mut stats = Vec::new();
    let mut sent: HashMap<u64, Instant> = HashMap::new();
    let (mut updates_sent, mut errors) = (0u64, 0u64);
    let mut acks: Histogram<u64> = new_histogram();
    loop {
        let now = Instant::now();
        let elapsed = now - phase_start;
        match phase {
            Phase::Warmup if elapsed.as_secs_f64() >= a.warmup => {
                (phase, phase_start, answered) = (Phase::Idle, now, 0);
            }
            Phase::Idle if elapsed.as_secs_f64() >= a.idle => {
                idle_qps = answered as f64 / elapsed.as_secs_f64();
                phase = Phase::BeforeUpdates;
            }
            Phase::Updating if elapsed.as_secs_f64() >= a.duration => {
                updating_qps = answered as f64 / elapsed.as_secs_f64();
                phase = Phase::AfterUpdates;
            }
            Phase::Updating => {
                // Updates are due at `rate` a second from the phase's start.
                let due = (elapsed.as_secs_f64() * rate) as u64 + 1;
                while updates_sent < due {
                    let (doc_id, json) = &docs[rng.gen_range(0..docs.len())];
                    let line = update_line(method, doc_id, json, updates_sent, &mut rng)?;
                    let id = UPDATE | updates_sent;
                    writeln!(input, "{id}\t{method_mode}\t0\t{line}", method_mode = mode(method))?;
                    sent.insert(id, Instant::now());
                    updates_sent += 1;
                }
                input.flush()?;
            }
            _ => {}
        }
        let quiet = outstanding == 0 && sent.is_empty();
        if quiet && matches!(phase, Phase::BeforeUpdates | Phase::AfterUpdates) {
            writeln!(input, "STATS")?;
            input.flush()?;
            loop {
                match engine.recv(Duration::from_secs(60))? {
                    Reply::Stats(v) => {
                        stats.push(v);
                        break;
                    }
                    Reply::Closed => return Err("the engine exited".into()),
                    _ => {}
                }
            }
            if phase == Phase::AfterUpdates {
                break;
            }
            (phase, phase_start, answered) = (Phase::Updating, Instant::now(), 0);
            for _ in 0..a.search_clients {
                search(&mut input)?;
            }
            outstanding = a.search_clients;
        }
        let reply = match engine.recv(Duration::from_micros(200)) {
            Ok(r) => r,
            Err(_) => continue,
        };
        let (id, at, ok) = match reply {
            Reply::Answer { id, at, .. } => (id, at, true),
            Reply::Error { id, at, message } => {
                eprintln!("engine error for request {id}: {message}");
                (id, at, false)
            }
            Reply::Stats(_) => continue,
            Reply::Closed => return Err("the engine exited during the run".into()),
        };
        if id & UPDATE != 0 {
            if let Some(t) = sent.remove(&id) {
                let _ = acks.record((at.saturating_duration_since(t).as_micros() as u64).max(1));
            }
            errors += u64::from(!ok);
            continue;
        }
        outstanding -= 1;
        answered += 1;
        if matches!(phase, Phase::Warmup | Phase::Idle | Phase::Updating) {
            search(&mut input)?;
            outstanding += 1;
        }
    }
    drop(input);
    engine.finish()?;
    let figure = |key: &str| stats[1][key].as_f64().unwrap_or(0.0) - stats[0][key].as_f64().unwrap_or(0.0);
    let (updated, update_ms) = (figure("updates") as u64, figure("update_ms"));
    let (reopens, reopen_total) = (figure("reopens") as u64, figure("reopen_ms"));
    // Per reopen interval for Lucene, per second for Needle (it does not reopen).
    let intervals = a.duration / reopen.unwrap_or(1.0);
    let reopen_ms = if reopens > 0 { reopen_total / reopens as f64 } else { 0.0 };
    Ok(UpdatesResult {
        engine: a.live.spec.label(),
        method: method.to_string(),
        rate,
        reopen_s: reopen,
        updated,
        reopens,
        reopen_ms,
        update_ms: update_ms / intervals,
        total_ms: reopen_ms + update_ms / intervals,
        per_doc_ms: (update_ms + reopen_total) / updated.max(1) as f64,
        per_doc_cpu_ms: (figure("update_cpu_ms") + figure("reopen_cpu_ms")) / updated.max(1) as f64,
        qps_idle: idle_qps,
        qps_updating: updating_qps,
        ack_us: [acks.value_at_quantile(0.5), acks.value_at_quantile(0.99), acks.max()],
        errors,
    })
}

fn mode(method: &str) -> &'static str {
    match method {
        "reindex" => "add",
        "numeric" => "numeric",
        _ => "binary",
    }
}

/// The request body of update number `n` of `doc_id`: the document with a
/// new `last_modified` (reindex), the new value (numeric), or new bytes (binary).
fn update_line(method: &str, doc_id: &str, json: &str, n: u64, rng: &mut StdRng) -> Result<String> {
    let value = 2_000_000_000_000i64 + n as i64;
    Ok(match method {
        "reindex" => {
            let mut doc: serde_json::Value = serde_json::from_str(json)?;
            doc["last_modified"] = serde_json::json!(value);
            doc.to_string()
        }
        "numeric" => format!("{doc_id}\t{value}"),
        _ => {
            let bytes: [u8; 15] = rng.gen();
            format!("{doc_id}\t{}", needle_engine::base64_text(&bytes))
        }
    })
}
