//! Storage faults (failed fsync, failed write, full disk): a clear error,
//! writes refused afterwards, reads still served, nothing acknowledged lost.
//! Faults are process-wide, so these tests live in their own binary and run
//! one at a time.

use std::io::ErrorKind;
use std::sync::Mutex;

use needle_engine::{Durability, Error, Index, IndexWriter, SearchRequest, WriterOptions};
use needle_storage::faults::{self, Op};

static SERIAL: Mutex<()> = Mutex::new(());

fn doc(i: u32) -> String {
    format!(r#"{{"id":"f{i}","body":"fault tolerant text {i}"}}"#)
}

fn opts() -> WriterOptions {
    WriterOptions {
        durability: Durability::Durable,
        tail_docs: 20,
        memory_bytes: 1 << 30,
        ..WriterOptions::default()
    }
}

fn open(path: &std::path::Path) -> IndexWriter {
    Index::open_or_create(path, None).unwrap().writer(opts()).unwrap()
}

fn count(index: &IndexWriter) -> u64 {
    index
        .searcher()
        .search(&SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new("tolerant") })
        .unwrap()
        .total
}

fn check_failure(op: Op, target: &str, kind: ErrorKind, during_commit: bool) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_string_lossy().to_string();
    let index = open(tmp.path());
    for i in 0..30 {
        index.add(&doc(i)).unwrap();
    }
    faults::inject(op, &format!("{dir}/{target}"), 0, true, kind);
    let failed = if during_commit { index.commit().err() } else { index.add(&doc(30)).err() };
    faults::clear();
    let err = failed.expect("the injected fault must surface").to_string();
    assert!(err.contains("injected"), "{err}");
    let refused = index.add(&doc(31)).unwrap_err();
    assert!(matches!(refused, Error::Poisoned { .. }), "{refused}");
    // Reads still work; a document whose write failed was never acknowledged and may or may not show.
    assert!(count(&index) >= 30, "reads still work");
    drop(index);
    let reopened = open(tmp.path());
    for i in 0..30 {
        assert!(
            reopened.searcher().get(&format!("f{i}")).unwrap().is_some(),
            "acknowledged f{i} lost after {op:?} failure"
        );
    }
    reopened.add(&doc(40)).unwrap();
}

#[test]
fn failed_log_fsync() {
    check_failure(Op::Fsync, "wal-", ErrorKind::Other, false);
}

#[test]
fn failed_log_write_on_a_full_disk() {
    check_failure(Op::Write, "wal-", ErrorKind::StorageFull, false);
}

#[test]
fn failed_segment_write_during_commit() {
    check_failure(Op::Write, "seg_", ErrorKind::StorageFull, true);
}

#[test]
fn failed_manifest_rename_during_commit() {
    check_failure(Op::Rename, "needle.manifest", ErrorKind::Other, true);
}

#[test]
fn writers_waiting_for_memory_get_an_error_once_flushes_fail() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_string_lossy().to_string();
    let options = WriterOptions {
        durability: Durability::Volatile,
        tail_docs: 20,
        memory_bytes: 16 << 10,
        ..WriterOptions::default()
    };
    let writer = Index::open_or_create(tmp.path(), None).unwrap().writer(options).unwrap();
    faults::inject(Op::Write, &format!("{dir}/seg_"), 0, true, ErrorKind::StorageFull);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let failed = (0..1_000_000).find_map(|i| writer.add(&doc(i)).err());
        let _ = tx.send(failed);
    });
    let outcome = rx.recv_timeout(std::time::Duration::from_secs(60));
    faults::clear();
    let err = outcome.expect("writers hung waiting for memory the failed flush never frees");
    assert!(matches!(err, Some(Error::Poisoned { .. })), "{err:?}");
}

/// (total, ids) of a response: what must not change when a read did not fail.
fn answer(r: &needle_engine::SearchResponse) -> (u64, Vec<String>) {
    (r.total, r.hits.iter().map(|h| h.id.clone()).collect())
}

#[test]
fn a_failed_or_short_read_fails_the_query_naming_the_file_on_every_backend() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let mut rng = needle_testkit::random::rng(5);
    let lines: Vec<String> =
        (0..1500).map(|i| needle_testkit::random::document(&mut rng, i).to_string()).collect();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let writer =
        index.writer(WriterOptions { durability: Durability::Graceful, ..WriterOptions::default() }).unwrap();
    let options =
        needle_engine::ImportOptions { threads: 2, memory_bytes: 64 << 10, skip_bad: false, bloom: None };
    writer.import(&mut std::io::Cursor::new(lines.join("\n")), &options, &Default::default()).unwrap();
    writer.close().unwrap();
    let words = needle_testkit::random::WORDS;
    let queries: Vec<String> = (0..12)
        .map(|i| match i % 4 {
            0 => words[i].to_string(),
            1 => format!("{} {}", words[i], words[i + 1]),
            2 => format!("+{} +{}", words[i], words[i + 2]),
            _ => format!("\"{} {}\"", words[i], words[i + 1]),
        })
        .collect();
    let request =
        |q: &str| SearchRequest { highlight: true, track_total_hits: u64::MAX, ..SearchRequest::new(q) };
    let mut failures = 0;
    for backend in
        [needle_engine::Backend::Mmap, needle_engine::Backend::Pread, needle_engine::Backend::Direct]
    {
        let reads = needle_engine::ReadOptions::new(backend, 0).unwrap();
        let index = Index::options().reads(reads).open(tmp.path()).unwrap();
        let baseline: Vec<_> =
            queries.iter().map(|q| answer(&index.searcher().search(&request(q)).unwrap())).collect();
        for (file, kind) in
            [(".post", ErrorKind::Other), (".post", ErrorKind::UnexpectedEof), (".docs", ErrorKind::Other)]
        {
            // The first reads open lists; later ones are blocks, positions and documents read mid-walk.
            for nth in [0, 1, 2, 5, 9, 14, 22, 35, 60, 100] {
                faults::inject(Op::Read, file, nth, false, kind);
                for (q, want) in queries.iter().zip(&baseline) {
                    match index.searcher().search(&request(q)) {
                        Ok(r) => assert_eq!(
                            &answer(&r),
                            want,
                            "{backend:?} {file} read {nth}: {q} answered wrongly"
                        ),
                        Err(e) => {
                            assert!(
                                e.to_string().contains(file),
                                "{backend:?}: {q}: the error names no file: {e}"
                            );
                            failures += 1;
                        }
                    }
                }
                faults::clear();
            }
        }
    }
    assert!(failures >= 3 * 3 * 10 / 2, "the injected faults were rarely hit: {failures}");
}

#[test]
fn an_update_whose_lookup_fails_adds_no_second_copy() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let writer = open(tmp.path());
    for i in 0..50 {
        writer.add(&doc(i)).unwrap();
    }
    writer.commit().unwrap();
    // The update's lookup of the old copy reads the id field's postings on disk: make that read fail.
    faults::inject(Op::Read, ".post", 0, false, ErrorKind::Other);
    let failed = writer.add(&doc(7));
    faults::clear();
    assert!(failed.is_err(), "an update whose lookup failed must not be acknowledged");
    let q = SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new("id:f7") };
    assert_eq!(writer.searcher().search(&q).unwrap().total, 1, "never two copies");
    writer.add(&doc(7)).unwrap();
    assert_eq!(writer.searcher().search(&q).unwrap().total, 1);
}
