//! Block decoding: a full block of 128 bit-packed integers, and walking a
//! posting list of 1M documents (doc ids and frequencies), with and without skips.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use needle_codecs::bitpack::{decode_block, encode_block};
use needle_codecs::postings::{write_record, DiskPostings};
use needle_codecs::TermPostings;
use needle_core::{DocSet, TERMINATED};
use needle_storage::FileSlice;

fn blocks(c: &mut Criterion) {
    let values: Vec<u32> = (0..128u32).map(|i| (i * 2_654_435_761u32) >> 21).collect();
    let mut packed = Vec::new();
    encode_block(&values, &mut packed);
    let mut g = c.benchmark_group("bitpack");
    g.throughput(Throughput::Elements(128));
    g.bench_function("decode_block_11bit", |b| {
        let mut out = [0u32; 128];
        b.iter(|| {
            let mut pos = 0;
            decode_block(black_box(&packed), &mut pos, &mut out);
            out[127]
        })
    });
    // Position deltas as a common term's are: mostly a few bits, a few
    // outliers (a block's first positions): patched, 4 bits and 7 exceptions
    // where plain packing would take 12 bits.
    let mut skewed: Vec<u32> = (0..128u32).map(|i| (i * 2_654_435_761u32) >> 28).collect();
    for i in [0, 19, 40, 63, 88, 101, 127] {
        skewed[i] = 3000 + i as u32;
    }
    let mut patched = Vec::new();
    encode_block(&skewed, &mut patched);
    assert_eq!(patched.len(), 1 + 16 * 4 + 1 + 2 * 7, "the block is patched");
    g.bench_function("decode_block_4bit_7_exceptions", |b| {
        let mut out = [0u32; 128];
        b.iter(|| {
            let mut pos = 0;
            decode_block(black_box(&patched), &mut pos, &mut out);
            out[127]
        })
    });
    g.finish();

    let docs: Vec<u32> = (0..1_000_000u32).map(|i| i * 3 + (i % 2)).collect();
    let freqs: Vec<u32> = (0..docs.len() as u32).map(|i| 1 + i % 3).collect();
    let mut bytes = Vec::new();
    let p = TermPostings { docs: &docs, freqs: &freqs, positions: &[], offsets: &[], bloom: None };
    write_record(&p, false, false, &[], &mut bytes);
    let file = FileSlice::from_vec("bench.post", bytes);
    let mut g = c.benchmark_group("postings");
    g.throughput(Throughput::Elements(docs.len() as u64));
    g.bench_function("iterate_1M_docs_and_freqs", |b| {
        b.iter(|| {
            let mut p = DiskPostings::open(&file, 0, u32::MAX).unwrap();
            let mut sum = 0u64;
            while p.doc() != TERMINATED {
                sum += u64::from(needle_codecs::Postings::freq(&p));
                p.advance();
            }
            sum
        })
    });
    g.bench_function("seek_every_1000th_doc", |b| {
        b.iter(|| {
            let mut p = DiskPostings::open(&file, 0, u32::MAX).unwrap();
            let mut t = 0;
            while p.seek(t) != TERMINATED {
                t += 3000;
            }
            t
        })
    });
    g.finish();
}

criterion_group!(benches, blocks);
criterion_main!(benches);
