//! The document store returns every document byte for byte, with and without
//! a trained dictionary, and aligns documents that would straddle a page.

use needle_codecs::docstore::DocStoreReader;
use needle_codecs::{footer, SegmentWriter};
use needle_storage::{Backend, Directory, ReadOptions};
use proptest::prelude::*;

fn round_trip(docs: &[Vec<u8>]) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let mut w = SegmentWriter::create(&dir, "s", docs.len() as u32).unwrap();
    w.write_docs(&mut |i| Ok(docs[i as usize].clone())).unwrap();
    w.finish().unwrap();
    // Every backend, with and without an application cache (a small one, so pages are evicted).
    for backend in Backend::ALL {
        for cache in [0, 64 << 10] {
            let dir = dir.clone().with_reads(ReadOptions::new(backend, cache).unwrap());
            let file = dir.open_read("s.docs").unwrap();
            let (len, _) = footer::verify_file(&file, b"DOCS", 1, true).unwrap();
            let store = DocStoreReader::open(file.slice(0..len)).unwrap();
            assert_eq!(store.count() as usize, docs.len());
            for (i, d) in docs.iter().enumerate() {
                assert_eq!(&store.get(i as u32).unwrap(), d, "{backend:?} cache {cache}");
            }
            assert!(store.get(docs.len() as u32).is_err());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn random_documents_round_trip(docs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3000), 0..40)) {
        round_trip(&docs);
    }
}

#[test]
fn text_documents_round_trip_with_a_trained_dictionary() {
    let docs: Vec<Vec<u8>> = (0..3000)
        .map(|i| format!(r#"{{"id":"d{i}","title":"State of the Union {i}","body":"Fellow citizens {} of the Senate"}}"#, "and the House ".repeat(i % 17)).into_bytes())
        .collect();
    round_trip(&docs);
}

/// Prefetching the top hits' documents reads their frames in one batch (the
/// index is in memory); reading them afterwards sends nothing more to the file.
#[test]
fn prefetched_documents_are_read_from_the_cache() {
    use needle_storage::counters;
    let docs: Vec<Vec<u8>> =
        (0..5000).map(|i| format!("document {i} {}", "text ".repeat(i % 300)).into_bytes()).collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let mut w = SegmentWriter::create(&dir, "s", docs.len() as u32).unwrap();
    w.write_docs(&mut |i| Ok(docs[i as usize].clone())).unwrap();
    w.finish().unwrap();
    let dir = dir.with_reads(ReadOptions::new(Backend::Direct, 8 << 20).unwrap());
    let file = dir.open_read("s.docs").unwrap();
    let (len, _) = footer::verify_file(&file, b"DOCS", 1, true).unwrap();
    let store = DocStoreReader::open(file.slice(0..len)).unwrap();
    let wanted = [4999u32, 0, 2000, 1000, 3000, 4000]; // entries and frames on pages apart
    counters::start();
    store.prefetch(&wanted);
    let prefetch = counters::finish();
    // At most one run each (fewer where a page holds several frames).
    assert!((1..=wanted.len() as u64).contains(&prefetch.storage_reads), "{prefetch:?}");
    counters::start();
    for &d in &wanted {
        assert_eq!(store.get(d).unwrap(), docs[d as usize]);
    }
    let after = counters::finish();
    assert_eq!((after.storage_reads, after.cache_misses), (0, 0), "{after:?}");
    assert!(after.cache_hits >= wanted.len() as u64);
}

/// The index is read and checked when the store opens: an entry pointing
/// past the frames is an error naming the file then, not a bad read later.
#[test]
fn an_index_entry_outside_the_store_fails_the_open() {
    let docs: Vec<Vec<u8>> = (0..300).map(|i| format!("doc {i}").into_bytes()).collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let mut w = SegmentWriter::create(&dir, "s", docs.len() as u32).unwrap();
    w.write_docs(&mut |i| Ok(docs[i as usize].clone())).unwrap();
    w.finish().unwrap();
    let file = dir.open_read("s.docs").unwrap();
    let (len, _) = footer::verify_file(&file, b"DOCS", 1, true).unwrap();
    let mut body = file.slice(0..len).read_all().unwrap().to_vec();
    let index_start = u64::from_le_bytes(body[len - 12..len - 4].try_into().unwrap()) as usize;
    let entry = index_start + 200 * 16;
    body[entry..entry + 8].copy_from_slice(&(len as u64).to_le_bytes());
    let e =
        DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body)).err().unwrap().to_string();
    assert!(e.contains("s.docs") && e.contains("document 200"), "{e}");
}
