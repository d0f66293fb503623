//! Crash safety of `durable` mode: `needle ingest --ack` is killed with
//! SIGKILL at random moments, 50 times; after each kill the index reopens and
//! every acknowledged document is there exactly once (updates included),
//! whether the kill came during a write, a flush, a commit or a merge.
//! The seed is printed; `NEEDLE_TEST_SEED=N` replays a run.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use needle_engine::{Index, SearchRequest, WriterOptions};
use rand::{Rng, SeedableRng};

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

#[test]
fn sigkill_during_durable_ingest_loses_no_acknowledged_document() {
    let seed = std::env::var("NEEDLE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    println!("seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().unwrap();
    let index_dir = tmp.path().join("index");
    let input = tmp.path().join("input.jsonl");
    let mut acked_before: BTreeSet<String> = BTreeSet::new();
    for round in 0..50 {
        write_round(&input, round);
        let mut child = Command::new(env!("CARGO_BIN_EXE_needle"))
            // A small memory budget makes the background thread flush, commit and merge while it is killed.
            .args([
                "ingest",
                "--index",
                index_dir.to_str().unwrap(),
                "--durability",
                "durable",
                "--ack",
                "--memory",
                "64KB",
            ])
            .args(["--input", input.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(out).lines().map_while(Result::ok).collect::<Vec<String>>()
        });
        std::thread::sleep(Duration::from_millis(rng.gen_range(10..250)));
        child.kill().unwrap();
        child.wait().unwrap();
        let acked = reader.join().unwrap();
        // A reader, before any recovery step: it applies the log's acknowledged tail in memory.
        let index = Index::open(&index_dir).unwrap();
        let sample: Vec<&String> = acked_before.iter().filter(|_| rng.gen_ratio(1, 20)).collect();
        for id in acked.iter().chain(sample) {
            assert_eq!(
                count(&index, id),
                1,
                "seed {seed}, round {round}: acknowledged `{id}` found {} times",
                count(&index, id)
            );
        }
        drop(index);
        acked_before.extend(acked);
        if round % 10 == 9 {
            // A clean durable close commits, so the log does not grow without end.
            Index::open(&index_dir).unwrap().writer(WriterOptions::default()).unwrap().close().unwrap();
        }
    }
    println!("{} distinct acknowledged documents over 50 kills", acked_before.len());
    assert!(acked_before.len() > 50, "seed {seed}: too few documents were acknowledged to test anything");
}
