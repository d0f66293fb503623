//! After a crash (a durable writer dropped without closing): readers see
//! every acknowledged document before any recovery step; any writer (an
//! ingest, an import, a merge) recovers the log first; the log is
//! checkpointed by size and by time, so recovery replays little.

mod common;

use std::time::Duration;

use needle_engine::{Durability, Error, Index, SearchRequest, WriterOptions};

fn count(index: &Index, query: &str) -> u64 {
    let request = SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new(query) };
    index.searcher().search(&request).unwrap().total
}

fn durable() -> WriterOptions {
    WriterOptions { durability: Durability::Durable, tail_docs: 50, ..WriterOptions::default() }
}

/// Adds `n` documents `{prefix}{i}` with `t` set to `t`, then "crashes" (drops the writer unclosed).
fn crash_after_adds(index: &Index, prefix: &str, n: usize, t: &str) {
    let writer = index.writer(durable()).unwrap();
    for i in 0..n {
        writer.add(&format!(r#"{{"id":"{prefix}{i}","t":{t},"body":"acknowledged {prefix} {i}"}}"#)).unwrap();
    }
    writer.delete(&format!("{prefix}0")).unwrap();
    drop(writer);
}

#[test]
fn readers_see_every_acknowledged_document_before_any_recovery() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    crash_after_adds(&index, "c", 120, "\"word\"");
    let log_before: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    let reader = Index::open(tmp.path()).unwrap();
    assert_eq!(reader.replayed().records, 121);
    assert_eq!(reader.num_docs(), 119);
    assert!(reader.searcher().get("c7").unwrap().is_some());
    assert!(reader.searcher().get("c0").unwrap().is_none(), "the delete replays too");
    assert_eq!(count(&reader, "acknowledged"), 119);
    let report = reader.check();
    assert!(report.ok && report.docs == 119, "{report:?}");
    let log_after: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(log_before, log_after, "a reader changes no file");
}

#[test]
fn an_import_after_a_crash_replays_the_log_first_under_the_writer_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    crash_after_adds(&index, "c", 80, "5");
    // The log typed `t` as a long: an import that makes it text is refused at its own line.
    let err =
        common::import_lines(&index, &[r#"{"id":"x","t":"not a number"}"#.to_string()], 1 << 20).unwrap_err();
    assert!(matches!(&err, Error::InvalidInput { line: Some(1), field: Some(f), .. } if f == "t"), "{err}");
    common::import_lines(&index, &[r#"{"id":"y","t":7}"#.to_string()], 1 << 20).unwrap();
    let writer = index.writer(durable()).unwrap();
    assert_eq!(writer.searcher().num_docs(), 80, "c1..c79 from the log, y from the import");
    writer.close().unwrap();
    assert_eq!(Index::open(tmp.path()).unwrap().replayed().records, 0, "everything is committed now");
}

#[test]
fn the_log_is_checkpointed_by_size_and_by_time() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let logs = || {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("wal-"))
            .count()
    };
    let by_size = WriterOptions {
        checkpoint_bytes: 4 << 10,
        checkpoint_interval: Duration::from_secs(3600),
        ..durable()
    };
    let writer = index.writer(by_size).unwrap();
    for i in 0..400 {
        writer.add(&format!(r#"{{"id":"s{i}","body":"filling the log with document number {i}"}}"#)).unwrap();
    }
    wait_until(|| Index::open(tmp.path()).unwrap().replayed().records < 100);
    assert!(logs() <= 3, "covered log files are deleted: {} left", logs());
    drop(writer);
    let by_time = WriterOptions { checkpoint_interval: Duration::from_millis(300), ..durable() };
    let writer = index.writer(by_time).unwrap();
    writer.add(r#"{"id":"t","body":"one change, then quiet"}"#).unwrap();
    wait_until(|| Index::open(tmp.path()).unwrap().replayed().records == 0);
    drop(writer);
    assert_eq!(Index::open(tmp.path()).unwrap().num_docs(), 401);
}

fn wait_until(done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "the background thread did not checkpoint in time");
        std::thread::sleep(Duration::from_millis(50));
    }
}
