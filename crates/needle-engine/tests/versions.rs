//! Document versions and conditional writes (Elasticsearch's `_version`,
//! `_seq_no`, `op_type=create`, `if_seq_no`): a version counts the writes
//! of an `_id`, a sequence number orders every change, a failed condition
//! changes nothing, and both survive commits, merges and a crash's replay.

mod common;

use needle_engine::{Durability, Error, IfCurrent, Index, WriterOptions};

fn durable() -> WriterOptions {
    WriterOptions { durability: Durability::Durable, tail_docs: 4, ..WriterOptions::default() }
}

#[test]
fn versions_count_writes_and_conditions_guard_them() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let writer = index.writer(durable()).unwrap();
    let first = writer.put(Some("a"), r#"{"body":"first"}"#, IfCurrent::Any).unwrap();
    assert_eq!((first.version, first.created), (1, true));
    let second = writer.put(Some("a"), r#"{"body":"second"}"#, IfCurrent::Any).unwrap();
    assert_eq!((second.version, second.created), (2, false));
    assert!(second.seq_no > first.seq_no);

    let refused = writer.put(Some("a"), r#"{"body":"create"}"#, IfCurrent::Absent).unwrap_err();
    assert!(matches!(&refused, Error::Conflict { id, .. } if id == "a"), "{refused}");
    let stale = writer.put(Some("a"), r#"{"body":"stale"}"#, IfCurrent::SeqNo(first.seq_no)).unwrap_err();
    assert!(stale.to_string().contains("version conflict"), "{stale}");
    let current = writer.searcher().get_document("a").unwrap().unwrap();
    assert_eq!((current.version, current.seq_no), (2, second.seq_no), "refused writes change nothing");
    assert!(current.source.contains("second"));

    let third = writer.put(Some("a"), r#"{"body":"third"}"#, IfCurrent::SeqNo(second.seq_no)).unwrap();
    assert_eq!(third.version, 3);
    let created = writer.put(Some("b"), r#"{"body":"b"}"#, IfCurrent::Absent).unwrap();
    assert_eq!((created.version, created.created), (1, true));
    let generated = writer.put(None, r#"{"body":"no id given"}"#, IfCurrent::Any).unwrap();
    assert_eq!(generated.id.len(), 20);

    let deleted = writer.remove("a", IfCurrent::Any).unwrap().unwrap();
    assert_eq!(deleted.version, 4, "a delete is one more write");
    assert_eq!(writer.remove("a", IfCurrent::Any).unwrap(), None);
    assert!(writer.remove("b", IfCurrent::SeqNo(12345)).is_err());
    let again = writer.put(Some("a"), r#"{"body":"again"}"#, IfCurrent::Absent).unwrap();
    assert_eq!((again.version, again.created), (1, true), "a deleted id starts over");
}

#[test]
fn sequence_numbers_count_from_zero_and_imported_documents_share_none() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let writer = index.writer(durable()).unwrap();
    let lines = r#"{"id":"i1","body":"imported"}"#.to_string() + "\n" + r#"{"id":"i2","body":"imported"}"#;
    writer.import(&mut std::io::Cursor::new(lines), &Default::default(), &Default::default()).unwrap();
    let imported = writer.searcher().get_document("i1").unwrap().unwrap();
    assert_eq!((imported.version, imported.seq_no), (1, 0), "an imported document has no log number");
    let first = writer.put(Some("a"), r#"{"body":"first"}"#, IfCurrent::Any).unwrap();
    assert_eq!(first.seq_no, 1, "the first logged write after an import does not show 0");
    let replaced = writer.put(Some("i1"), r#"{"body":"replaced"}"#, IfCurrent::SeqNo(0)).unwrap();
    assert_eq!(replaced.version, 2);
    assert!(writer.put(Some("i1"), r#"{"body":"stale"}"#, IfCurrent::SeqNo(0)).is_err());

    let fresh = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(fresh.path(), None).unwrap();
    let writer = index.writer(durable()).unwrap();
    let first = writer.put(Some("a"), r#"{"body":"first"}"#, IfCurrent::Any).unwrap();
    assert_eq!(first.seq_no, 0, "a new index's first write, as Elasticsearch numbers it");
    assert_eq!(writer.searcher().get_document("a").unwrap().unwrap().seq_no, 0);
    writer.put(Some("a"), r#"{"body":"second"}"#, IfCurrent::SeqNo(0)).unwrap();
    writer.delete_by_query("nothing_matches_this").unwrap();
    drop(writer);
    let reopened = Index::open(fresh.path()).unwrap();
    assert_eq!(reopened.searcher().get_document("a").unwrap().unwrap().seq_no, 1, "replayed from the log");
}

#[test]
fn versions_survive_commits_merges_and_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let writer = index.writer(durable()).unwrap();
    for round in 0..5 {
        for i in 0..10 {
            writer
                .put(Some(&format!("d{i}")), &format!(r#"{{"body":"round {round}"}}"#), IfCurrent::Any)
                .unwrap();
        }
        if round % 2 == 0 {
            writer.commit().unwrap();
        }
    }
    let before: Vec<_> =
        (0..10).map(|i| writer.searcher().get_document(&format!("d{i}")).unwrap().unwrap()).collect();
    assert!(before.iter().all(|d| d.version == 5), "{before:?}");
    drop(writer); // a crash: the last round is in the log only
    let reopened = Index::open(tmp.path()).unwrap();
    let replayed: Vec<_> =
        (0..10).map(|i| reopened.searcher().get_document(&format!("d{i}")).unwrap().unwrap()).collect();
    assert_eq!(replayed, before, "the log replays to the same versions and sequence numbers");
    common::merge(&reopened, 1);
    let merged = Index::open(tmp.path()).unwrap();
    let after: Vec<_> =
        (0..10).map(|i| merged.searcher().get_document(&format!("d{i}")).unwrap().unwrap()).collect();
    assert_eq!(after, before);
    let writer = merged.writer(durable()).unwrap();
    assert_eq!(
        writer.put(Some("d3"), r#"{"body":"sixth"}"#, IfCurrent::SeqNo(before[3].seq_no)).unwrap().version,
        6
    );
}
