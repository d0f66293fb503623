//! Crash safety of `durable` mode: `needle ingest --ack` is killed with
//! SIGKILL at random moments (its small memory budget keeps flushes, commits
//! and merges under way); after each kill, before any recovery step, every
//! document it acknowledged (and a sample of earlier ones) is read back with
//! `needle get`, and found exactly once by a search, updates included. Every
//! tenth round `needle recover` commits what the log holds, as a restart would.
//!
//! 50 rounds here; `scripts/crash_loop.sh` runs 1,000 and keeps the report.
//! `NEEDLE_CRASH_ROUNDS=N` sets the rounds, `NEEDLE_TEST_SEED=N` replays a run.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use needle_engine::{Index, SearchRequest};
use rand::{Rng, SeedableRng};

fn needle() -> Command {
    Command::new(env!("CARGO_BIN_EXE_needle"))
}

fn write_round(path: &std::path::Path, round: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..4000 {
        // Every fifth document replaces one of a few shared ids: updates must never duplicate.
        let id = if i % 5 == 0 { format!("shared-{}", i % 7) } else { format!("r{round}-{i}") };
        writeln!(f, r#"{{"id":"{id}","round":{round},"body":"crash test document {i} of round {round}"}}"#)
            .unwrap();
    }
}

fn count(index: &Index, id: &str) -> u64 {
    let q = format!("id:{id}");
    index
        .searcher()
        .search(&SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new(&q) })
        .unwrap()
        .total
}

/// Kills a durable ingest of `input` after `delay`; returns the ids it acknowledged.
fn ingest_and_kill(index: &std::path::Path, input: &std::path::Path, delay: Duration) -> Vec<String> {
    let mut child = needle()
        .args(["ingest", "--index", index.to_str().unwrap(), "--durability", "durable", "--ack"])
        .args(["--memory", "64KB", "--input", input.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || BufReader::new(out).lines().map_while(Result::ok).collect());
    std::thread::sleep(delay);
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap()
}

#[test]
fn sigkill_during_durable_ingest_loses_no_acknowledged_document() {
    let seed = std::env::var("NEEDLE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    let rounds = std::env::var("NEEDLE_CRASH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(50usize);
    println!("seed {seed}, {rounds} rounds");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    let input = tmp.path().join("input.jsonl");
    let mut acked_before: BTreeSet<String> = BTreeSet::new();
    let started = Instant::now();
    for round in 0..rounds {
        write_round(&input, round);
        let acked = ingest_and_kill(&index_dir, &input, Duration::from_millis(rng.gen_range(10..250)));
        let sample: Vec<&String> = acked_before.iter().filter(|_| rng.gen_ratio(1, 20)).collect();
        let ids: BTreeSet<&String> = acked.iter().chain(sample).collect();
        if ids.is_empty() {
            // Killed before its first acknowledgement (a loaded machine, an early kill): nothing to check.
            println!("round {round}: nothing acknowledged yet");
            continue;
        }
        // Before any recovery step: a reader applies the log's acknowledged tail.
        let check = Instant::now();
        let got = needle().args(["get", "--index", index_dir.to_str().unwrap()]).args(&ids).output().unwrap();
        let context = format!("seed {seed}, round {round}");
        assert!(got.status.success(), "{context}: {}", String::from_utf8_lossy(&got.stderr));
        assert_eq!(got.stdout.iter().filter(|&&b| b == b'\n').count(), ids.len(), "{context}");
        let index = Index::open(&index_dir).unwrap();
        for id in &ids {
            assert_eq!(
                count(&index, id),
                1,
                "{context}: acknowledged `{id}` found {} times",
                count(&index, id)
            );
        }
        let replayed = index.replayed();
        println!(
            "round {round}: {} acknowledged, {} checked in {:.2} s; the reader replayed {} log records in {:.3} s",
            acked.len(),
            ids.len(),
            check.elapsed().as_secs_f64(),
            replayed.records,
            replayed.elapsed.as_secs_f64()
        );
        drop(index);
        acked_before.extend(acked);
        if round % 10 == 9 {
            // A restart: a writer recovers and commits the log, so it does not grow without end.
            let o = needle().args(["recover", "--index", index_dir.to_str().unwrap()]).output().unwrap();
            assert!(o.status.success(), "{context}: recover: {}", String::from_utf8_lossy(&o.stderr));
        }
    }
    let report = Index::open(&index_dir).unwrap().check();
    assert!(report.ok, "seed {seed}: {:?}", report.problems);
    println!(
        "{rounds} kills, {} distinct acknowledged documents, all found exactly once, in {:.0} s",
        acked_before.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(acked_before.len() > rounds, "seed {seed}: too few documents were acknowledged to test anything");
}
