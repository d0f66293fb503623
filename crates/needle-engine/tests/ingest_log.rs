//! An index with an ingest log (a cluster shard's replicated log): every
//! write reaches the log in order and is acknowledged once the log holds
//! it; a log known to fail refuses writes, which then change nothing; a copy
//! of the index that lost writes takes them back from the log, in order,
//! with the same versions and sequence numbers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use needle_engine::ingest_log::IngestLog;
use needle_engine::{Durability, Error, IfCurrent, Index, IndexWriter, Result, WriterOptions};

/// A log in memory: it holds what it is given, unless told to fail.
#[derive(Default)]
struct MemoryLog {
    records: Mutex<Vec<(u64, Vec<u8>)>>,
    /// Refuses writes before they are taken.
    down: AtomicBool,
    /// Takes writes but never acknowledges them.
    silent: AtomicBool,
}

impl IngestLog for MemoryLog {
    fn append(&self, lsn: u64, record: Vec<u8>) {
        if !self.silent.load(Ordering::SeqCst) {
            self.records.lock().unwrap().push((lsn, record));
        }
    }

    fn wait(&self, lsn: u64) -> Result<()> {
        match self.records.lock().unwrap().iter().any(|(l, _)| *l == lsn) {
            true => Ok(()),
            false => Err(Error::Unavailable { what: format!("the log does not hold write {lsn}") }),
        }
    }

    fn check(&self) -> Result<()> {
        match self.down.load(Ordering::SeqCst) {
            true => Err(Error::Unavailable { what: "the log is down".into() }),
            false => Ok(()),
        }
    }
}

fn writer(path: &std::path::Path) -> IndexWriter {
    let index = Index::open_or_create(path, None).unwrap();
    index
        .writer(WriterOptions { durability: Durability::Volatile, tail_docs: 3, ..Default::default() })
        .unwrap()
}

fn document(writer: &IndexWriter, id: &str) -> Option<(String, u64, u64)> {
    writer.searcher().get_document(id).unwrap().map(|d| (d.source, d.version, d.seq_no))
}

#[test]
fn writes_reach_the_log_in_order_and_a_copy_takes_them_back() {
    let tmp = tempfile::tempdir().unwrap();
    let origin = writer(&tmp.path().join("origin"));
    let log = Arc::new(MemoryLog::default());
    origin.attach_log(log.clone()).unwrap();
    assert!(origin.attach_log(log.clone()).is_err(), "one log for good");
    for i in 0..8 {
        origin
            .put(Some(&format!("d{i}")), &format!(r#"{{"body":"doc {i}","n":{i}}}"#), IfCurrent::Any)
            .unwrap();
    }
    origin.put(Some("d1"), r#"{"body":"again","n":10}"#, IfCurrent::Any).unwrap();
    origin.update_numeric("d2", "n", &serde_json::json!(42), IfCurrent::Any).unwrap();
    origin.remove("d3", IfCurrent::Any).unwrap();
    origin.remove("never", IfCurrent::Any).unwrap();
    assert!(origin.update_numeric("never", "n", &serde_json::json!(1), IfCurrent::Any).is_err());
    let records = log.records.lock().unwrap().clone();
    let lsns: Vec<u64> = records.iter().map(|(l, _)| *l).collect();
    assert_eq!(lsns, (lsns[0]..lsns[0] + 12).collect::<Vec<_>>(), "every write once, in order");
    assert_eq!(origin.next_lsn(), lsns[11] + 1);

    let copy = writer(&tmp.path().join("copy"));
    let (first, _) = &records[0];
    let gap = copy.apply_logged(first + 1, &records[1].1).unwrap_err();
    assert!(gap.to_string().contains("never had"), "{gap}");
    assert_eq!(copy.searcher().num_docs(), 0, "a gap changes nothing");
    assert!(copy.apply_logged(*first, b"").is_err(), "an empty record");
    for (lsn, record) in &records {
        assert!(copy.apply_logged(*lsn, record).unwrap());
    }
    assert!(!copy.apply_logged(*first, &records[0].1).unwrap(), "a write it has is skipped");
    for id in ["d0", "d1", "d2", "d3", "d7", "never"] {
        assert_eq!(document(&copy, id), document(&origin, id), "{id}");
    }
    assert!(document(&copy, "d2").unwrap().0.contains("42"), "the update in place came back");
    assert_eq!(copy.next_lsn(), origin.next_lsn());
}

#[test]
fn a_log_that_fails_refuses_writes_or_leaves_them_unacknowledged() {
    let tmp = tempfile::tempdir().unwrap();
    let writer = writer(tmp.path());
    let log = Arc::new(MemoryLog::default());
    writer.attach_log(log.clone()).unwrap();
    writer.put(Some("a"), r#"{"body":"kept","n":1}"#, IfCurrent::Any).unwrap();

    log.down.store(true, Ordering::SeqCst);
    let refused = writer.put(Some("b"), r#"{"body":"refused"}"#, IfCurrent::Any).unwrap_err();
    assert!(matches!(refused, Error::Unavailable { .. }), "{refused}");
    assert!(writer.remove("a", IfCurrent::Any).is_err());
    assert!(writer.update_numeric("a", "n", &serde_json::json!(2), IfCurrent::Any).is_err());
    assert_eq!(writer.searcher().num_docs(), 1, "refused writes change nothing");
    assert_eq!(document(&writer, "a").unwrap().1, 1);

    // Taken, but the log never holds it: the caller is not told it is durable.
    log.down.store(false, Ordering::SeqCst);
    log.silent.store(true, Ordering::SeqCst);
    let unacknowledged = writer.put(Some("c"), r#"{"body":"not acknowledged"}"#, IfCurrent::Any).unwrap_err();
    assert!(matches!(unacknowledged, Error::Unavailable { .. }), "{unacknowledged}");
}

/// A log's gap (writes a failed node took but never logged) is taken as
/// writes that change nothing: the writes after it apply, and a durable
/// copy keeps the numbers through a restart, its write-ahead log unbroken.
#[test]
fn a_gap_the_log_marks_is_skipped_and_survives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let durable = || {
        let index = Index::open_or_create(tmp.path(), None).unwrap();
        index.writer(WriterOptions { durability: Durability::Durable, ..Default::default() }).unwrap()
    };
    let source = tempfile::tempdir().unwrap();
    let origin = writer(source.path());
    let log = Arc::new(MemoryLog::default());
    origin.attach_log(log.clone()).unwrap();
    for i in 0..3 {
        origin.put(Some(&format!("d{i}")), r#"{"n":1}"#, IfCurrent::Any).unwrap();
    }
    let records = log.records.lock().unwrap().clone();

    let copy = durable();
    assert!(copy.apply_logged(1, &records[0].1).unwrap());
    assert_eq!(copy.skip_logged(4).unwrap(), 3, "writes 2, 3 and 4 skipped");
    assert_eq!(copy.skip_logged(3).unwrap(), 0, "a gap it has passed");
    assert!(copy.skip_logged(u64::MAX - 1).is_err(), "an implausible gap");
    // Write 5 of the log (its third record, renumbered as a later write would be).
    assert!(copy.apply_logged(5, &records[2].1).unwrap());
    copy.put(Some("after"), r#"{"n":2}"#, IfCurrent::Any).unwrap();
    assert_eq!(copy.next_lsn(), 7);
    drop(copy);

    let back = durable();
    assert_eq!(back.next_lsn(), 7, "the skipped numbers replayed from the write-ahead log");
    assert_eq!(back.replayed().records, 6);
    for (id, there) in [("d0", true), ("d1", false), ("d2", true), ("after", true)] {
        assert_eq!(document(&back, id).is_some(), there, "{id}");
    }
    assert_eq!(document(&back, "after").unwrap().2, 5, "_seq_no 5: the numbers ran on past the gap");
}
