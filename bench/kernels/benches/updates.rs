//! In-place doc-value updates: `update_numeric` and `update_binary` of random
//! documents of the shared corpus (or the bundled one), merged to one
//! segment, in a volatile writer (no write-ahead log): the cost of the call
//! itself, which seed 002's benchmark measures under search load.

use criterion::{criterion_group, criterion_main, Criterion};
use needle_engine::{
    missing_value, Durability, FieldKind, IfCurrent, IndexWriter, Schema, SearchRequest, SortBy, SortKey,
    WriterOptions,
};
use needle_kernel_benches::{build_index_with, corpus_path, read_lines};

const MAPPING: &str = r#"{"properties": {"title": {"type": "text"}, "body": {"type": "text"},
  "last_modified": {"type": "long"}, "title_dv": {"type": "binary"}}}"#;

/// Each corpus line with a `last_modified` and a `title_dv`, and the ids.
fn with_values(lines: &[String]) -> (Vec<String>, Vec<String>) {
    let mut ids = Vec::with_capacity(lines.len());
    let lines = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let mut doc: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
            ids.push(doc["id"].as_str().unwrap().to_string());
            doc.insert("last_modified".into(), (1_600_000_000_000u64 + i as u64 * 1000).into());
            doc.insert("title_dv".into(), "dGl0bGU".into());
            serde_json::Value::Object(doc).to_string()
        })
        .collect();
    (lines, ids)
}

fn updates(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let (lines, ids) = with_values(&read_lines(&corpus_path(), usize::MAX));
    let index = build_index_with(tmp.path(), &lines, Some(Schema::from_mapping(MAPPING).unwrap()));
    let writer =
        index.writer(WriterOptions { durability: Durability::Volatile, ..Default::default() }).unwrap();
    sorted_searches(c, &writer, "before_updates");
    let mut g = c.benchmark_group("update_in_place");
    let mut next = 0usize;
    let mut pick = || {
        // A multiplicative step over the ids: every call another document, no pattern to cache.
        next = (next + 7_919) % ids.len();
        &ids[next]
    };
    let mut value = 0u64;
    g.bench_function("numeric", |b| {
        b.iter(|| {
            value += 1;
            writer.update_numeric(pick(), "last_modified", &value.into(), IfCurrent::Any).unwrap().seq_no
        })
    });
    g.bench_function("binary", |b| {
        b.iter(|| writer.update_binary(pick(), "title_dv", b"a new title", IfCurrent::Any).unwrap().seq_no)
    });
    // Under search load every update finds its newest layer shared with a snapshot.
    let mut held = writer.searcher();
    g.bench_function("numeric_between_snapshots", |b| {
        b.iter(|| {
            value += 1;
            let seq =
                writer.update_numeric(pick(), "last_modified", &value.into(), IfCurrent::Any).unwrap().seq_no;
            held = writer.searcher();
            seq
        })
    });
    g.finish();
    drop(held);
    sorted_searches(c, &writer, "after_updates");
}

/// Top 10 by `last_modified`, newest first, counting up to 1,000 matches
/// (as the update benchmark's searches), through the updates once there are some.
fn sorted_searches(c: &mut Criterion, writer: &IndexWriter, when: &str) {
    let searcher = writer.searcher();
    let field = searcher.schema().field_id("last_modified").unwrap();
    let missing = missing_value(FieldKind::Long, true, false);
    let mut g = c.benchmark_group(format!("sorted_by_field_{when}"));
    for (name, q) in
        [("term_common", "the"), ("or_two_terms", "state union"), ("and_two_terms", "+state +union")]
    {
        let mut request = SearchRequest::new(q);
        request.track_total_hits = 1_000;
        request.sort = vec![SortKey { by: SortBy::Field { field, missing }, descending: true }];
        g.bench_function(name, |b| b.iter(|| searcher.search(&request).unwrap().total));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = updates
}
criterion_main!(benches);
