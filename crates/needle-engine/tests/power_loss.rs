//! Simulated power loss (`needle_storage::powerloss`, as Lucene's
//! MockDirectoryWrapper.crash): a durable writer adds, replaces, deletes and
//! commits while the power is cut at a random write, fsync or rename; the
//! folder is then put back to what was fsynced (every later write lost,
//! unsynced names undone) and reopened. Every acknowledged change must be
//! there, nothing doubled, at each of thousands of random points. The seed is
//! printed; `NEEDLE_TEST_SEED=N` replays a run, `NEEDLE_POWER_LOSS_POINTS=N`
//! sets how many points.

use std::collections::BTreeMap;

use needle_engine::{Durability, Index, SearchRequest, WriterOptions};
use needle_storage::powerloss;
use rand::{Rng, SeedableRng};

/// What the index must say of an `_id` after the crash.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// The latest acknowledged version; a later one may have made it to disk unacknowledged.
    Version(u32),
    Deleted,
}

fn options() -> WriterOptions {
    // No background work: every write happens in the order the test makes it.
    WriterOptions {
        durability: Durability::Durable,
        tail_docs: 8,
        memory_bytes: 1 << 30,
        merge_trigger: usize::MAX,
        checkpoint_bytes: u64::MAX,
        checkpoint_interval: std::time::Duration::from_secs(3600),
        ..WriterOptions::default()
    }
}

fn count(index: &Index, id: &str) -> u64 {
    let request = SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new(&format!("id:{id}")) };
    index.searcher().search(&request).unwrap().total
}

/// One point: changes until the power is cut after `ops` operations; returns what was acknowledged.
fn run_until_the_power_goes(
    dir: &std::path::Path,
    ops: u64,
    rng: &mut rand::rngs::StdRng,
) -> BTreeMap<String, State> {
    let mut acked: BTreeMap<String, State> = BTreeMap::new();
    let index = Index::open(dir).unwrap();
    let writer = index.writer(options()).unwrap();
    powerloss::cut_after(dir, ops);
    for step in 0..80u32 {
        let id = format!("d{}", rng.gen_range(0..30));
        let outcome = match rng.gen_range(0..10) {
            0 => writer.delete(&id).map(|_| (id.clone(), State::Deleted)),
            1 => writer.commit().map(|()| (String::new(), State::Deleted)),
            _ => writer
                .add(&format!(r#"{{"id":"{id}","version":{step},"body":"power loss step {step}"}}"#))
                .map(|id| (id, State::Version(step))),
        };
        match outcome {
            Ok((id, state)) if !id.is_empty() => {
                acked.insert(id, state);
            }
            Ok(_) => {}
            Err(_) => break, // the power is out: nothing more is acknowledged
        }
    }
    drop(writer);
    drop(index);
    acked
}

#[test]
fn every_acknowledged_change_survives_a_power_loss_at_any_write() {
    let seed = std::env::var("NEEDLE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    let points = std::env::var("NEEDLE_POWER_LOSS_POINTS").ok().and_then(|s| s.parse().ok()).unwrap_or(1500);
    println!("seed {seed}, {points} points");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut cut_before_the_end = 0;
    for point in 0..points {
        // In memory where possible: thousands of points make many fsyncs.
        let tmp = match std::path::Path::new("/dev/shm").is_dir() {
            true => tempfile::tempdir_in("/dev/shm").unwrap(),
            false => tempfile::tempdir().unwrap(),
        };
        let dir = tmp.path();
        // A committed first version of some documents, made before the power can go.
        let index = Index::open_or_create(dir, None).unwrap();
        let writer = index.writer(options()).unwrap();
        for i in 0..10 {
            writer.add(&format!(r#"{{"id":"d{i}","version":0,"body":"committed before"}}"#)).unwrap();
        }
        writer.close().unwrap();
        drop(index);
        let mut expected: BTreeMap<String, State> =
            (0..10).map(|i| (format!("d{i}"), State::Version(0))).collect();
        powerloss::arm(dir).unwrap();
        let ops = rng.gen_range(0..300);
        expected.extend(run_until_the_power_goes(dir, ops, &mut rng));
        cut_before_the_end += u32::from(powerloss::operations(dir) > ops);
        powerloss::crash(dir).unwrap();
        let context = format!("seed {seed}, point {point}, power cut after {ops} operations");
        let index = Index::open(dir).unwrap_or_else(|e| panic!("{context}: the index does not open: {e}"));
        for (id, state) in &expected {
            let stored = index.searcher().get(id).unwrap();
            match (state, stored) {
                (State::Deleted, None) => {}
                (State::Version(v), Some(source)) => {
                    let json: serde_json::Value = serde_json::from_str(&source).unwrap();
                    let found = json["version"].as_u64().unwrap() as u32;
                    assert!(found >= *v, "{context}: {id} is version {found}, {v} was acknowledged");
                    assert_eq!(count(&index, id), 1, "{context}: {id} found more than once");
                }
                // A delete acknowledged, then an add in flight when the power went, may show.
                (State::Deleted, Some(_)) => assert_eq!(count(&index, id), 1, "{context}: {id} doubled"),
                (State::Version(v), None) => panic!("{context}: acknowledged {id} version {v} is gone"),
            }
        }
        // A writer recovers the log for good; the index checks whole.
        index.writer(options()).unwrap().close().unwrap();
        let report = Index::open(dir).unwrap().check();
        assert!(report.ok, "{context}: {:?}", report.problems);
    }
    assert!(
        cut_before_the_end > points / 3,
        "seed {seed}: the power was rarely cut mid-run ({cut_before_the_end})"
    );
}
