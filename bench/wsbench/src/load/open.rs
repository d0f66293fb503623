//! Open loop: Poisson arrivals at `rate` per second from one sender thread (no
//! thread per client). The arrival schedule is fixed in advance; each latency is
//! measured from the query's scheduled arrival, not from when it was actually
//! sent, so time spent queued behind a slow query or a pause counts (no
//! coordinated omission). Requests still unanswered when the drain times out are
//! recorded with the time waited so far.

use std::io::Write;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{classify, new_histogram, query_at, shuffled_order, LoadResult};
use crate::engine::EngineProcess;
use crate::procstat;
use crate::util::Result;

pub struct OpenOptions {
    pub rate: f64,
    pub warmup: Duration,
    pub duration: Duration,
    pub k: usize,
    pub seed: u64,
    /// How long to wait for answers after the last arrival.
    pub drain: Duration,
}

/// Arrival offsets (seconds from the start) of a Poisson process at `rate` over `span`.
pub fn schedule(rate: f64, span: Duration, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x005e_ed0f_a771_7a15);
    let mut t = 0.0;
    let mut v = Vec::new();
    let end = span.as_secs_f64();
    loop {
        let u: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
        t += -u.ln() / rate;
        if t >= end {
            return v;
        }
        v.push(t);
    }
}

pub fn run(engine: &mut EngineProcess, queries: &[String], o: &OpenOptions) -> Result<LoadResult> {
    if o.rate <= 0.0 {
        return Err("the open-loop rate must be positive".into());
    }
    let order = shuffled_order(queries.len(), o.seed);
    let offsets = schedule(o.rate, o.warmup + o.duration, o.seed);
    let warm = o.warmup.as_secs_f64();
    let base = engine.id_base;
    engine.id_base += offsets.len() as u64;
    let mut input = engine.take_input().ok_or("the engine's input is closed")?;
    let lines: Vec<String> = (0..offsets.len() as u64)
        .map(|i| format!("{}\ttop\t{}\t{}\n", base + i, o.k, query_at(queries, &order, i)))
        .collect();
    let start = Instant::now() + Duration::from_millis(20);
    let sender_offsets = offsets.clone();
    let sender = std::thread::spawn(move || -> std::io::Result<std::io::BufWriter<_>> {
        for (line, off) in lines.iter().zip(&sender_offsets) {
            let target = start + Duration::from_secs_f64(*off);
            let now = Instant::now();
            if target > now {
                std::thread::sleep(target - now);
            }
            input.write_all(line.as_bytes())?;
            input.flush()?;
        }
        Ok(input)
    });

    let mut h = new_histogram();
    let mut result = LoadResult { mode: "open".into(), offered_rate: o.rate, ..Default::default() };
    let mut answered = vec![false; offsets.len()];
    let mut left = offsets.len();
    let t0 = start + o.warmup;
    let end = start + o.warmup + o.duration;
    let mut before: Option<procstat::ProcCounters> = None;
    let deadline = end + o.drain;
    while left > 0 {
        let now = Instant::now();
        if before.is_none() && now >= t0 {
            before = Some(procstat::sample(engine.pid));
        }
        if now >= deadline {
            break;
        }
        let wait = if before.is_none() { t0.saturating_duration_since(now) } else { deadline - now };
        let reply = match engine.recv(wait.max(Duration::from_millis(1))) {
            Ok(r) => r,
            Err(_) => continue,
        };
        let Some((id, at, ok)) = classify(reply, result.errors)? else { continue };
        if id < base || id - base >= answered.len() as u64 {
            continue;
        }
        let i = (id - base) as usize;
        if answered[i] {
            continue;
        }
        answered[i] = true;
        left -= 1;
        if offsets[i] < warm {
            continue;
        }
        let scheduled = start + Duration::from_secs_f64(offsets[i]);
        if ok {
            result.completed += 1;
            h.saturating_record(at.saturating_duration_since(scheduled).as_micros().max(1) as u64);
        } else {
            result.errors += 1;
        }
    }
    let after = procstat::sample(engine.pid);
    let now = Instant::now();
    for (i, off) in offsets.iter().enumerate() {
        if !answered[i] && *off >= warm {
            result.unanswered += 1;
            let scheduled = start + Duration::from_secs_f64(*off);
            h.saturating_record(now.saturating_duration_since(scheduled).as_micros().max(1) as u64);
        }
    }
    let input = sender.join().map_err(|_| "the sender thread panicked")??;
    engine.put_input(input);
    result.elapsed_s = o.duration.as_secs_f64();
    result.finish(&h, after.since(&before.unwrap_or(after)));
    Ok(result)
}
