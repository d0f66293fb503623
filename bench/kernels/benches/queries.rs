//! Term, AND, OR and phrase queries, top 10, on the shared corpus (or the
//! bundled one when the shared data is absent), merged to one segment, warm.

use criterion::{criterion_group, criterion_main, Criterion};
use needle_engine::SearchRequest;
use needle_kernel_benches::{build_index, corpus_path, read_lines};

fn queries(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let lines = read_lines(&corpus_path(), usize::MAX);
    let index = build_index(tmp.path(), &lines);
    let mut g = c.benchmark_group("query_top10");
    for (name, q) in [
        ("term_common", "the"),
        ("term_rare", "zygomatic"),
        ("or_two_terms", "state union"),
        ("or_five_terms", "national debt interest rate policy"),
        ("and_two_terms", "+state +union"),
        ("and_three_terms", "+public +credit +revenue"),
        ("phrase_two_terms", "\"united states\""),
        ("phrase_three_terms", "\"of the united\""),
    ] {
        let request = SearchRequest::new(q);
        g.bench_function(name, |b| b.iter(|| index.searcher().search(&request).unwrap().total));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = queries
}
criterion_main!(benches);
