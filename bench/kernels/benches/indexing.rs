//! Indexing throughput: the first 20,000 documents of the shared corpus (or
//! the bundled corpus), two threads, into a fresh index, bytes per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use needle_engine::{ImportOptions, ImportProgress, Index};
use needle_kernel_benches::{corpus_path, graceful, read_lines};

fn indexing(c: &mut Criterion) {
    let lines = read_lines(&corpus_path(), 20_000);
    let text = lines.join("\n").into_bytes();
    let mut g = c.benchmark_group("indexing");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(10);
    g.bench_function("import_20k_docs_2_threads", |b| {
        b.iter(|| {
            let tmp = tempfile::tempdir().unwrap();
            let writer = Index::open_or_create(tmp.path(), None).unwrap().writer(graceful()).unwrap();
            let options = ImportOptions { threads: 2, memory_bytes: 1 << 30, skip_bad: false, bloom: None };
            writer
                .import(&mut std::io::Cursor::new(&text), &options, &ImportProgress::default())
                .unwrap()
                .docs
        })
    });
    g.finish();
}

criterion_group!(benches, indexing);
criterion_main!(benches);
