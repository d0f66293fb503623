//! Golden fixtures: indexes written by earlier versions of Needle, one per
//! format version (tests/compat/README.md says which commit made each, and
//! how), read by today's code. Each must open, check whole, answer every
//! query as an index built today from the same documents does (same ids,
//! same scores, same highlights), give back every document, replay its old
//! write-ahead log, and merge into today's format.

mod common;

use std::path::{Path, PathBuf};

use needle_engine::{Durability, Index, SearchRequest, WriterOptions};

const QUERIES: [&str; 8] = [
    "needle",
    "quick brown fox",
    "+lazy +dog",
    "\"quick brown fox\"",
    "\"the needle\"~2",
    "tag:alpha",
    "title:updated OR title:logged",
    "year:2026 OR year:1999",
];

fn fixtures() -> Vec<PathBuf> {
    let root = common::repo_root().join("tests/compat");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("needle.manifest").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn lines(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::repo_root().join("tests/compat").join(file)).unwrap();
    text.lines().map(str::to_string).collect()
}

/// Today's index of the same documents, by the same steps: an import, then
/// live updates (then, for `logged`, the logged documents).
fn today(dir: &Path, logged: bool) -> Index {
    let index = Index::open_or_create(dir, None).unwrap();
    common::import_lines(&index, &lines("corpus.jsonl"), 256 << 10).unwrap();
    let writer = common::writer(&index);
    let more = if logged {
        [lines("updates.jsonl"), lines("logged.jsonl")].concat()
    } else {
        lines("updates.jsonl")
    };
    for line in more {
        writer.add(&line).unwrap();
    }
    writer.close().unwrap();
    index
}

/// (id, score bits) of every hit, best first, ties by id: what must not depend on the format.
fn answers(index: &Index) -> Vec<Vec<(String, u32)>> {
    QUERIES
        .iter()
        .map(|q| {
            let request = SearchRequest { top_k: 1000, track_total_hits: u64::MAX, ..SearchRequest::new(q) };
            let mut hits: Vec<(String, u32)> = index
                .searcher()
                .search(&request)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| (h.id, h.score.to_bits()))
                .collect();
            hits.sort_by(|a, b| f32::from_bits(b.1).total_cmp(&f32::from_bits(a.1)).then(a.0.cmp(&b.0)));
            hits
        })
        .collect()
}

/// A copy of a fixture's folder (a writer changes what it opens), with its
/// write-ahead log or without it (the index as its last commit left it).
fn copy(from: &Path, to: &Path, with_log: bool) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if with_log || !name.starts_with("wal-") {
            std::fs::copy(&path, to.join(name)).unwrap();
        }
    }
}

fn assert_same(old: &Index, new: &Index, context: &str) {
    assert_eq!(old.num_docs(), new.num_docs(), "{context}: documents");
    for (q, (a, b)) in QUERIES.iter().zip(answers(old).iter().zip(&answers(new))) {
        assert_eq!(a, b, "{context}: `{q}`");
        assert!(!a.is_empty(), "{context}: `{q}` finds nothing: the fixture tests nothing");
    }
    // Highlights are cut at the offsets stored in the postings.
    for q in ["quick brown fox", "\"the needle\"~2"] {
        let request = SearchRequest { top_k: 50, highlight: true, ..SearchRequest::new(q) };
        let marked = |index: &Index| -> Vec<_> {
            let hits = index.searcher().search(&request).unwrap().hits;
            let mut marked: Vec<_> = hits.into_iter().map(|h| (h.id, h.highlight)).collect();
            marked.sort_by(|a, b| a.0.cmp(&b.0));
            marked
        };
        let (a, b) = (marked(old), marked(new));
        assert_eq!(a, b, "{context}: highlights of `{q}`");
        assert!(a.iter().any(|(_, h)| !h.is_empty()), "{context}: `{q}` highlights nothing");
    }
    for id in ["c0", "c9", "c13", "c200", "c399", "n7", "l3"] {
        assert_eq!(old.searcher().get(id).unwrap(), new.searcher().get(id).unwrap(), "{context}: get {id}");
    }
}

#[test]
fn every_earlier_format_reads_and_answers_as_today() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, logged) =
        (today(&tmp.path().join("today"), false), today(&tmp.path().join("today-logged"), true));
    // Merging drops deleted documents, and with them their part of the statistics.
    let merged_today = today(&tmp.path().join("today-merged"), true);
    common::merge(&merged_today, 1);
    let fixtures = fixtures();
    assert!(fixtures.len() >= 4, "postings formats 1 to 4: {fixtures:?}");
    for fixture in fixtures {
        let name = fixture.file_name().unwrap().to_string_lossy().into_owned();
        let dir = tmp.path().join(&name);
        copy(&fixture, &dir.join("index"), false);
        copy(&fixture, &dir.join("logged"), true);

        let old = Index::open(&dir.join("index")).unwrap();
        let report = old.check();
        assert!(report.ok, "{name}: {:?}", report.problems);
        assert_same(&old, &plain, &name);

        let old_logged = Index::open(&dir.join("logged")).unwrap();
        assert!(old_logged.replayed().records > 0, "{name}: its log holds the logged documents");
        assert_same(&old_logged, &logged, &format!("{name}, logged"));

        // A writer recovers the old log and merges the old segments into today's format.
        let writer = old_logged
            .writer(WriterOptions { durability: Durability::Graceful, ..Default::default() })
            .unwrap();
        writer.merge(1).unwrap();
        writer.close().unwrap();
        let merged = Index::open(&dir.join("logged")).unwrap();
        assert_eq!(merged.segment_counts().0, 1);
        assert!(merged.check().ok, "{name}: merged");
        assert_same(&merged, &merged_today, &format!("{name}, merged"));
    }
}
