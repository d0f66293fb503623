//! Closed loop: `clients` requests outstanding at all times; each answer sends the
//! next query. A warm-up phase runs first and is not recorded; the timed phase
//! records requests sent after it began, until `duration` has passed (the
//! outstanding ones are drained and counted).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::{classify, new_histogram, query_at, shuffled_order, LoadResult};
use crate::engine::EngineProcess;
use crate::procstat;
use crate::util::Result;

pub struct ClosedOptions {
    pub clients: usize,
    pub warmup: Duration,
    pub duration: Duration,
    pub k: usize,
    pub seed: u64,
    /// Stop the timed phase after this many queries (0: no limit).
    pub max_queries: u64,
}

pub fn run(engine: &mut EngineProcess, queries: &[String], o: &ClosedOptions) -> Result<LoadResult> {
    let order = shuffled_order(queries.len(), o.seed);
    let mut h = new_histogram();
    let mut sent: HashMap<u64, (Instant, bool)> = HashMap::new();
    let base = engine.id_base;
    let mut next_id = base;
    let started = Instant::now();
    let mut t0: Option<Instant> = None;
    let mut before = procstat::sample(engine.pid);
    let mut result = LoadResult { mode: "closed".into(), clients: o.clients, ..Default::default() };
    let mut measured_sent = 0u64;
    let mut last_answer = started;
    let timeout = Duration::from_secs(120);
    let send = |engine: &mut EngineProcess,
                next_id: &mut u64,
                measured: bool,
                sent: &mut HashMap<u64, (Instant, bool)>|
     -> Result<()> {
        let id = *next_id;
        *next_id += 1;
        // Stamped before the write: a fast engine may answer before the flush returns.
        sent.insert(id, (Instant::now(), measured));
        engine.send(id, false, o.k, query_at(queries, &order, id - base))?;
        engine.flush()?;
        Ok(())
    };
    for _ in 0..o.clients.max(1) {
        send(engine, &mut next_id, false, &mut sent)?;
    }
    loop {
        let now = Instant::now();
        if t0.is_none() && now.duration_since(started) >= o.warmup {
            t0 = Some(now);
            before = procstat::sample(engine.pid);
        }
        let stopping = t0.is_some_and(|t| {
            now.duration_since(t) >= o.duration || (o.max_queries > 0 && measured_sent >= o.max_queries)
        });
        if stopping && sent.is_empty() {
            break;
        }
        let reply = engine.recv(timeout)?;
        let Some((id, at, ok)) = classify(reply, result.errors)? else { continue };
        let Some((s, measured)) = sent.remove(&id) else { continue };
        if measured {
            last_answer = at;
            if ok {
                result.completed += 1;
                h.saturating_record(at.duration_since(s).as_micros().max(1) as u64);
            } else {
                result.errors += 1;
            }
        }
        let now = Instant::now();
        let in_timed = t0.is_some_and(|t| now.duration_since(t) < o.duration)
            && (o.max_queries == 0 || measured_sent < o.max_queries);
        let in_warmup = t0.is_none();
        if in_timed || in_warmup {
            if in_timed {
                measured_sent += 1;
            }
            send(engine, &mut next_id, in_timed, &mut sent)?;
        }
    }
    engine.id_base = next_id;
    let after = procstat::sample(engine.pid);
    result.elapsed_s = t0.map_or(0.0, |t| last_answer.saturating_duration_since(t).as_secs_f64());
    result.finish(&h, after.since(&before));
    Ok(result)
}
