//! A damaged write-ahead log is never skipped silently: opening the index
//! (reader or writer) fails naming the file and what would be lost, `check`
//! reports it, nothing is deleted; a recovery asked to truncate the log keeps
//! what precedes the damage, commits it, and removes the log.

use needle_engine::{Durability, Error, Index, WriterOptions};

fn durable() -> WriterOptions {
    WriterOptions { durability: Durability::Durable, tail_docs: 64, ..WriterOptions::default() }
}

fn wal_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("wal-"))
        .collect();
    files.sort();
    files
}

/// A crashed durable ingest of `n` documents, its log's bytes zeroed at the middle.
fn damaged(n: usize) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let writer = index.writer(durable()).unwrap();
    for i in 0..n {
        writer.add(&format!(r#"{{"id":"w{i}","body":"logged document {i}"}}"#)).unwrap();
    }
    drop(writer);
    let log = wal_files(tmp.path()).pop().unwrap();
    let mut bytes = std::fs::read(&log).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] = 0;
    bytes[middle + 1] = 0;
    std::fs::write(&log, bytes).unwrap();
    (tmp, log.file_name().unwrap().to_string_lossy().into_owned())
}

#[test]
fn a_zeroed_byte_mid_log_fails_every_open_and_deletes_nothing() {
    let (tmp, log) = damaged(1000);
    let err = Index::open(tmp.path()).err().expect("a reader must not skip the damage");
    let Error::Corrupt { file, offset: Some(_), what } = &err else { panic!("{err}") };
    assert_eq!(file, &log);
    assert!(what.contains("intact records after it"), "{what}");
    let index = Index::options().truncate_damaged_log(true).open(tmp.path()).unwrap();
    let kept = index.num_docs();
    assert!(kept > 100 && kept < 900, "the reader applied what precedes the damage: {kept}");
    assert!(index.replayed().dropped.is_some());
    let writer_err = index.writer(durable()).err().expect("a plain writer must refuse the damaged log");
    assert!(matches!(writer_err, Error::Corrupt { .. }), "{writer_err}");
    assert_eq!(wal_files(tmp.path()).len(), 1, "the damaged log is still there");
}

#[test]
fn recovery_asked_to_truncate_keeps_what_precedes_the_damage_and_removes_the_log() {
    let (tmp, _) = damaged(1000);
    let index = Index::options().truncate_damaged_log(true).open(tmp.path()).unwrap();
    let kept = index.num_docs();
    let options = WriterOptions { truncate_damaged_log: true, ..durable() };
    let writer = index.writer(options).unwrap();
    assert!(writer.replayed().dropped.unwrap().contains("would be lost"));
    writer.add(r#"{"id":"after","body":"written after the recovery"}"#).unwrap();
    drop(writer);
    let reopened = Index::open(tmp.path()).unwrap();
    assert_eq!(reopened.num_docs(), kept + 1);
    assert!(reopened.searcher().get("w0").unwrap().is_some());
    assert!(reopened.searcher().get("after").unwrap().is_some());
    assert!(reopened.check().ok);
}
