//! `filter-stats`: how full an index's phrase filters are, by posting
//! frequency, and the false-positive rate that implies. A probe set for a
//! term not in a filter hits only set bits with chance `(set / bits)^probes`,
//! so the mean of that over a bucket's non-empty filters is the rate a phrase
//! test sees there. Measures the filter parameters on a real corpus.

use std::path::Path;

use fst::{IntoStreamer, Streamer};
use needle_codecs::postings::read_header;
use needle_codecs::{termmap, Postings};
use needle_core::{DocSet, TERMINATED};
use needle_engine::Index;

use crate::util::Result;

/// Posting frequencies of each bucket's first member (the last one is open).
const BUCKETS: [u32; 7] = [1, 2, 3, 4, 5, 6, 11];

#[derive(Default, Clone, Copy)]
struct Bucket {
    postings: u64,
    empty_filters: u64,
    filters: u64,
    filter_bytes: u64,
    false_positive_sum: f64,
}

pub fn filter_stats(path: &Path, every: usize) -> Result<()> {
    let index = Index::open(path)?;
    let mut buckets = [Bucket::default(); BUCKETS.len()];
    let (mut terms, mut positions_bytes, mut bloom_bytes) = (0u64, 0u64, 0u64);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for segment in index.segment_readers() {
        let mut stream = segment.term_map().into_stream();
        let mut n = 0usize;
        while let Some((key, entry)) = stream.next() {
            n += 1;
            let field = termmap::split_key(key).map(|(f, _)| f);
            if field == Some(needle_engine::ID_FIELD) || !n.is_multiple_of(every.max(1)) {
                continue;
            }
            let offset = termmap::unpack_entry(entry).0;
            let header = read_header(segment.postings_file(), offset)?;
            let mut postings = segment.postings_at(entry)?;
            terms += 1;
            positions_bytes += header.positions as u64;
            bloom_bytes += header.bloom as u64;
            while postings.doc() != TERMINATED {
                before.clear();
                after.clear();
                let Some(shape) = postings.filters_into(&mut before, &mut after) else { break };
                let freq = postings.freq();
                let bucket = &mut buckets[BUCKETS.iter().rposition(|&b| freq >= b).unwrap_or(0)];
                bucket.postings += 1;
                let (len, probes) = (shape.bytes(freq), shape.hashes(freq));
                for filter in [&before[..len], &after[..len]] {
                    let ones: u32 = filter.iter().map(|b| b.count_ones()).sum();
                    if ones == 0 {
                        bucket.empty_filters += 1;
                        continue;
                    }
                    bucket.filters += 1;
                    bucket.filter_bytes += len as u64;
                    bucket.false_positive_sum += (f64::from(ones) / (8 * len) as f64).powi(probes as i32);
                }
                postings.advance();
            }
        }
    }
    print_table(&buckets, terms, positions_bytes, bloom_bytes);
    Ok(())
}

fn print_table(buckets: &[Bucket], terms: u64, positions_bytes: u64, bloom_bytes: u64) {
    let all: u64 = buckets.iter().map(|b| b.postings).sum::<u64>().max(1);
    println!("{terms} terms; filters {bloom_bytes} bytes, positions {positions_bytes} bytes\n");
    println!(
        "| posting freq | postings | share | empty filters | bytes a filter | est. false-positive rate |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (i, b) in buckets.iter().enumerate() {
        let name = match BUCKETS.get(i + 1) {
            Some(&next) if next == BUCKETS[i] + 1 => BUCKETS[i].to_string(),
            Some(&next) => format!("{}-{}", BUCKETS[i], next - 1),
            None => format!("{}+", BUCKETS[i]),
        };
        let sides = (2 * b.postings).max(1) as f64;
        println!(
            "| {name} | {} | {:.1}% | {:.1}% | {:.1} | {:.5} |",
            b.postings,
            100.0 * b.postings as f64 / all as f64,
            100.0 * b.empty_filters as f64 / sides,
            b.filter_bytes as f64 / b.filters.max(1) as f64,
            b.false_positive_sum / b.filters.max(1) as f64
        );
    }
}
