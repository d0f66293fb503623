//! The one writer: a second one is refused at once, a writer works on the
//! index as it is on disk (not as a stale handle saw it), and an `_id` is
//! unique in an index however its documents arrive.

mod common;

use needle_engine::{Error, Index, SearchRequest, WriterOptions};

fn count(index: &Index, query: &str) -> u64 {
    let request = SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new(query) };
    index.searcher().search(&request).unwrap().total
}

fn docs(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!(r#"{{"id":"{prefix}{i}","body":"written by {prefix} number {i}"}}"#)).collect()
}

#[test]
fn a_second_writer_is_refused_naming_the_holder_until_the_first_closes() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let first = index.writer(WriterOptions::default()).unwrap();
    first.add(r#"{"id":"a","body":"first"}"#).unwrap();
    // Another handle on the same folder, as another process would have.
    let other = Index::open(tmp.path()).unwrap();
    let err = other.writer(WriterOptions::default()).err().expect("a second writer must be refused");
    let Error::Locked { holder, .. } = &err else { panic!("expected Locked, got {err}") };
    assert!(holder.contains(&format!("process {}", std::process::id())), "{holder}");
    assert!(index.writer(WriterOptions::default()).is_err(), "the same handle gets no second writer either");
    first.close().unwrap();
    let second = other.writer(WriterOptions::default()).unwrap();
    assert_eq!(second.searcher().get("a").unwrap().as_deref(), Some(r#"{"id":"a","body":"first"}"#));
    second.close().unwrap();
}

#[test]
fn a_writer_from_a_stale_handle_sees_what_others_committed_and_deletes_none_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    let stale = Index::open_or_create(tmp.path(), None).unwrap();
    common::import_lines(&stale, &docs("old", 30), 1 << 20).unwrap();
    // Another handle imports while `stale` still holds the manifest it read.
    let other = Index::open(tmp.path()).unwrap();
    common::import_lines(&other, &docs("late", 40), 1 << 20).unwrap();
    assert_eq!(stale.num_docs(), 30, "a reader's snapshot stays what it opened");
    common::merge(&stale, 1);
    assert_eq!(stale.num_docs(), 70, "the merge planned from the index on disk");
    let reopened = Index::open(tmp.path()).unwrap();
    assert_eq!(reopened.num_docs(), 70);
    assert_eq!(reopened.segment_counts().0, 1);
    let report = reopened.check();
    assert!(report.ok, "{:?}", report.problems);
}

#[test]
fn an_id_is_unique_within_a_file_across_imports_and_whatever_its_json_type() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let mut lines = docs("d", 3000);
    lines.push(r#"{"id":"d7","body":"the second d7 in one file"}"#.into());
    lines.push(r#"{"id":12,"body":"the number twelve"}"#.into());
    // Several segments from one file: the duplicates are in other chunks than their originals.
    common::import_lines(&index, &lines, 64 << 10).unwrap();
    assert!(index.segment_counts().0 > 1);
    assert_eq!(count(&index, "id:d7"), 1);
    assert!(index.searcher().get("d7").unwrap().unwrap().contains("the second d7"));
    common::import_lines(&index, &[r#"{"id":"12","body":"twelve as a string"}"#.to_string()], 1 << 20)
        .unwrap();
    common::import_lines(&index, &[r#"{"id":"d9","body":"d9 once more"}"#.to_string()], 1 << 20).unwrap();
    assert_eq!(count(&index, "id:12"), 1, "12 and \"12\" are one _id");
    assert!(index.searcher().get("12").unwrap().unwrap().contains("as a string"));
    assert_eq!(count(&index, "id:d9"), 1);
    assert_eq!(index.num_docs(), 3001, "d0..d2999 and 12");
    let reopened = Index::open(tmp.path()).unwrap();
    assert_eq!(
        (reopened.num_docs(), count(&reopened, "id:d9")),
        (3001, 1),
        "the replacements were committed"
    );
    // Live adds replace imported copies too.
    let writer = common::writer(&reopened);
    writer.add(r#"{"id":"d9","body":"and once more, live"}"#).unwrap();
    assert_eq!((count(&reopened, "id:d9"), reopened.num_docs()), (1, 3001));
    writer.close().unwrap();
}

#[test]
fn documents_as_values_and_built_documents_are_added_like_json_text() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    let writer = common::writer(&index);
    writer.add_value(&serde_json::json!({"id": "v", "title": "from a value", "year": 1999})).unwrap();
    let built = needle_engine::Document::new().id("b").text("title", "from a builder").long("year", 2001);
    writer.add_document(&built).unwrap();
    assert_eq!(count(&index, "title:from"), 2);
    assert_eq!(count(&index, "year:2001"), 1);
    writer.close().unwrap();
}

#[test]
fn readers_opening_while_a_writer_merges_and_deletes_files_always_open() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), None).unwrap();
    for round in 0..4 {
        common::import_lines(&index, &docs(&format!("r{round}-"), 300), 64 << 10).unwrap();
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut opened = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                // Each open reads a manifest whose segments a merge may be deleting meanwhile.
                let index = Index::open(tmp.path()).unwrap_or_else(|e| panic!("open {opened}: {e}"));
                assert!(count(&index, "written") >= 1200, "open {opened}");
                opened += 1;
            }
            opened
        });
        let writer = common::writer(&index);
        for round in 0..20 {
            let more = docs(&format!("m{round}-"), 50).join("\n");
            writer.import(&mut std::io::Cursor::new(more), &Default::default(), &Default::default()).unwrap();
            writer.merge(1).unwrap();
        }
        writer.close().unwrap();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 5, "the reader hardly opened while merges ran");
    });
}
