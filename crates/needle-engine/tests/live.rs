//! The live index: documents searchable as soon as `add` returns, updates
//! seen whole, deletions, concurrent readers and writers, and what each
//! durability mode keeps across a close or a crash (a drop without close).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use needle_engine::{Durability, Index, IndexWriter, SearchRequest, WriterOptions};
use needle_search::SearchOptions;
use needle_testkit::random;

mod common;

fn options(durability: Durability) -> WriterOptions {
    WriterOptions { durability, tail_docs: 50, memory_bytes: 64 << 10, ..WriterOptions::default() }
}

fn open(path: &std::path::Path, options: WriterOptions) -> IndexWriter {
    Index::open_or_create(path, None).unwrap().writer(options).unwrap()
}

fn doc(id: &str, version: u32, text: &str) -> String {
    format!(r#"{{"id":"{id}","version":{version},"body":"{text}"}}"#)
}

fn hits(index: &IndexWriter, query: &str) -> u64 {
    let r = SearchRequest { track_total_hits: u64::MAX, ..SearchRequest::new(query) };
    index.searcher().search(&r).unwrap().total
}

#[test]
fn added_documents_are_searchable_at_once_and_updates_replace() {
    let tmp = tempfile::tempdir().unwrap();
    let index = open(tmp.path(), options(Durability::Volatile));
    for i in 0..120 {
        index.add(&doc(&format!("d{i}"), 1, "needle in the haystack")).unwrap();
        assert_eq!(hits(&index, &format!("id:d{i}")), 1, "d{i} not visible right after add");
    }
    index.add(&doc("d7", 2, "a brand new text")).unwrap();
    assert_eq!(hits(&index, "id:d7"), 1);
    assert_eq!(hits(&index, "haystack"), 119);
    assert_eq!(hits(&index, "brand"), 1);
    assert!(index.searcher().get("d7").unwrap().unwrap().contains("\"version\":2"));
    assert!(index.delete("d8").unwrap());
    assert!(!index.delete("d8").unwrap());
    assert!(!index.searcher().contains("d8").unwrap() && index.searcher().contains("d7").unwrap());
    assert_eq!(hits(&index, "haystack"), 118);
    assert_eq!(index.delete_by_query("id:d9 id:d10").unwrap(), 2);
    assert_eq!(index.searcher().num_docs(), 117);
    index.commit().unwrap();
    assert_eq!(hits(&index, "haystack"), 116);
    assert_eq!(index.searcher().get("d8").unwrap(), None);
}

#[test]
fn concurrent_writers_and_readers_never_see_a_missing_or_doubled_document() {
    let tmp = tempfile::tempdir().unwrap();
    let index = open(tmp.path(), options(Durability::Durable));
    let acked: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        for w in 0..2 {
            let (index, acked) = (&index, &acked);
            s.spawn(move || {
                for i in 0..300 {
                    let id = format!("w{w}-{}", i % 150);
                    index.add(&doc(&id, i, &format!("writer {w} round {i}"))).unwrap();
                    acked.lock().unwrap().push(id);
                }
            });
        }
        for r in 0..2 {
            let (index, acked, done) = (&index, &acked, &done);
            s.spawn(move || {
                let mut rng = random::rng(r);
                while !done.load(Ordering::Relaxed) {
                    let pick = {
                        let a = acked.lock().unwrap();
                        if a.is_empty() {
                            continue;
                        }
                        a[rand::Rng::gen_range(&mut rng, 0..a.len())].clone()
                    };
                    let n = hits(index, &format!("id:{pick}"));
                    assert_eq!(n, 1, "{pick} acknowledged but found {n} times");
                }
            });
        }
        s.spawn(|| {
            while acked.lock().unwrap().len() < 600 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            done.store(true, Ordering::Relaxed);
        });
    });
    assert_eq!(index.searcher().num_docs(), 300);
}

#[test]
fn durable_mode_recovers_every_acknowledged_document_after_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let index = open(tmp.path(), options(Durability::Durable));
        for i in 0..200 {
            index.add(&doc(&format!("a{i}"), 1, "first batch")).unwrap();
        }
        index.commit().unwrap();
        for i in 0..100 {
            index.add(&doc(&format!("b{i}"), 1, "after the commit")).unwrap();
        }
        index.add(&doc("a5", 2, "updated after the commit")).unwrap();
        index.delete("a6").unwrap();
        // Dropped without close: as if the process died here.
    }
    let index = open(tmp.path(), options(Durability::Durable));
    assert_eq!(index.searcher().num_docs(), 299);
    assert_eq!(hits(&index, "id:a5"), 1);
    assert!(index.searcher().get("a5").unwrap().unwrap().contains("updated"));
    assert_eq!(index.searcher().get("a6").unwrap(), None);
    assert_eq!(hits(&index, "\"after the commit\""), 101, "b0..b99 and the new a5");
    index.close().unwrap();
    let offline = Index::open(tmp.path()).unwrap();
    assert_eq!(offline.num_docs(), 299, "close commits everything");
    assert_eq!(offline.check().problems, Vec::<String>::new());
}

#[test]
fn graceful_persists_on_close_and_volatile_reopens_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let index = open(tmp.path(), options(Durability::Graceful));
    for i in 0..80 {
        index.add(&doc(&format!("g{i}"), 1, "graceful")).unwrap();
    }
    index.close().unwrap();
    assert_eq!(open(tmp.path(), options(Durability::Graceful)).searcher().num_docs(), 80);

    let tmp = tempfile::tempdir().unwrap();
    {
        let index =
            open(tmp.path(), WriterOptions { memory_bytes: 1 << 30, ..options(Durability::Volatile) });
        index.add(&doc("v1", 1, "volatile")).unwrap();
    }
    let index = open(tmp.path(), options(Durability::Volatile));
    assert_eq!(index.searcher().num_docs(), 0);
    index.add(&doc("v2", 1, "volatile")).unwrap();
    assert_eq!(hits(&index, "volatile"), 1);
}

#[test]
fn live_results_equal_offline_results() {
    let mut rng = random::rng(42);
    let lines: Vec<String> = (0..700).map(|i| random::document(&mut rng, i).to_string()).collect();
    let live_dir = tempfile::tempdir().unwrap();
    let live = open(live_dir.path(), options(Durability::Volatile));
    for (i, l) in lines.iter().enumerate() {
        live.add(l).unwrap();
        if i == 300 {
            live.commit().unwrap();
        }
    }
    let offline_dir = tempfile::tempdir().unwrap();
    let offline = Index::open_or_create(offline_dir.path(), None).unwrap();
    let opts =
        needle_engine::ImportOptions { threads: 1, memory_bytes: 1 << 30, skip_bad: false, bloom: None };
    common::import_with(&offline, &lines, &opts).unwrap();
    let fields: Vec<u16> =
        ["title", "body"].iter().map(|f| live.searcher().schema().field_id(f).unwrap()).collect();
    assert_eq!(
        fields,
        ["title", "body"].iter().map(|f| offline.schema().field_id(f).unwrap()).collect::<Vec<_>>()
    );
    let tag = live.searcher().schema().field_id("tag").unwrap();
    for i in 0..60 {
        let q = random::query(&mut rng, &fields, tag, 2);
        let o = SearchOptions { top_k: 10, track_total_hits: u64::MAX, bloom: true };
        let (a, b) = (live.searcher().top_docs(&q, o).unwrap(), offline.searcher().top_docs(&q, o).unwrap());
        assert_eq!(a.total, b.total, "query {i}: {q:?}");
        let scores =
            |t: &needle_search::TopDocs| t.hits.iter().map(|h| (h.global, h.score)).collect::<Vec<_>>();
        assert_eq!(scores(&a), scores(&b), "query {i}: {q:?}");
    }
}

#[test]
fn background_merges_bound_the_segment_count_and_keep_every_update_and_delete() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = WriterOptions {
        durability: Durability::Durable,
        tail_docs: 40,
        memory_bytes: 16 << 10,
        merge_trigger: 4,
        merge_factor: 3,
        merge_bytes_per_sec: 1 << 30,
        ..WriterOptions::default()
    };
    let index = open(tmp.path(), opts.clone());
    for i in 0..1500u32 {
        index.add(&doc(&format!("m{}", i % 1000), i, &format!("merge round {}", i / 1000))).unwrap();
        if i % 97 == 0 {
            index.delete(&format!("m{}", (i * 7) % 1000)).unwrap();
        }
    }
    // Let the background thread catch up: flushes and merges happen there.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while index.index().segment_counts().0 > 4 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (disk, _) = index.index().segment_counts();
    assert!(disk <= 4, "{disk} on-disk segments: merges did not keep up");
    let live_docs = index.searcher().num_docs();
    let expected: Vec<(String, Option<String>)> = (0..1000)
        .map(|i| format!("m{i}"))
        .map(|id| (id.clone(), index.searcher().get(&id).unwrap()))
        .collect();
    for (id, _) in expected.iter().filter(|(_, d)| d.is_some()).take(50) {
        assert_eq!(hits(&index, &format!("id:{id}")), 1, "{id}");
    }
    index.close().unwrap();
    let reopened = open(tmp.path(), opts);
    for (id, stored) in &expected {
        assert_eq!(&reopened.searcher().get(id).unwrap(), stored, "{id} after reopening");
        if stored.is_some() {
            assert_eq!(hits(&reopened, &format!("id:{id}")), 1, "{id} after reopening");
        }
    }
    assert_eq!(reopened.searcher().num_docs(), live_docs);
    let offline = Index::open(tmp.path()).unwrap();
    assert!(offline.check().ok);
    let highest: usize = offline
        .segment_readers()
        .iter()
        .map(|s| needle_codecs::SegmentRead::name(s.as_ref())[4..].parse::<usize>().unwrap())
        .max()
        .unwrap();
    assert!(
        highest >= 10,
        "segment numbers up to {highest}: too few flushes and merges happened to test anything"
    );
}
