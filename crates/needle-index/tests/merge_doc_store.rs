//! A merge keeps its inputs' compression dictionaries (up to
//! `MAX_DICTIONARIES`, equal ones once) and copies their documents' frames as
//! they are; the documents of inputs past that are recompressed. Every
//! document reads back as it was stored.

use needle_analysis::Analyzer;
use needle_codecs::docstore::MAX_DICTIONARIES;
use needle_codecs::{SegmentRead, SegmentReader, Verify};
use needle_core::Deletes;
use needle_index::{merge_segments, AnalyzedDoc, MemSegment};
use needle_storage::Directory;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A segment of 120 documents of some 600 bytes in a vocabulary of its own
/// (so each trains a dictionary unlike the others').
fn write(dir: &Directory, name: &str, seed: u64) -> SegmentReader {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut segment = MemSegment::new(name);
    for doc in 0..120 {
        let words: Vec<String> =
            (0..90).map(|_| format!("{name}word{}", rng.gen_range(0..40) * (seed + 3))).collect();
        let source = format!(r#"{{"id":"{name}-{doc}","body":"{}"}}"#, words.join(" "));
        let mut analyzed = AnalyzedDoc::new(source.into_bytes());
        analyzed.text(1, &Analyzer::standard(), &[&words.join(" ")]);
        segment.add(analyzed);
    }
    segment.flush(dir, name).unwrap();
    SegmentReader::open_with(dir, name, Verify::Checksums).unwrap()
}

#[test]
fn a_merge_copies_frames_with_their_inputs_dictionaries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let inputs: Vec<SegmentReader> =
        (0..MAX_DICTIONARIES as u64 + 1).map(|i| write(&dir, &format!("seg_{i}"), i)).collect();
    let dicts: Vec<Vec<u8>> = inputs.iter().map(|s| s.doc_store().dictionary().unwrap().unwrap()).collect();
    assert!(dicts.iter().all(|d| !d.is_empty()), "each input trains a dictionary");
    // Two inputs: both dictionaries kept, every frame copied.
    let pair: Vec<(&SegmentReader, Option<&dyn Deletes>)> = vec![(&inputs[0], None), (&inputs[1], None)];
    merge_segments(&dir, "two", &pair).unwrap();
    let two = SegmentReader::open_with(&dir, "two", Verify::Checksums).unwrap();
    assert_eq!(two.doc_store().dictionaries().unwrap(), dicts[..2].to_vec());
    for new in 0..240 {
        let (source, old) = (&inputs[new as usize / 120], new % 120);
        let copied = two.doc_store().frame_bytes(new).unwrap().unwrap();
        assert_eq!(copied.bytes, source.doc_store().frame_bytes(old).unwrap().unwrap().bytes, "doc {new}");
        assert_eq!(two.stored(new).unwrap(), source.stored(old).unwrap());
    }
    // One input more than a store keeps: the one of the fewest documents
    // (the last, with a tie) is recompressed with the first dictionary.
    let all: Vec<(&SegmentReader, Option<&dyn Deletes>)> = inputs.iter().map(|s| (s, None)).collect();
    merge_segments(&dir, "all", &all).unwrap();
    let merged = SegmentReader::open_with(&dir, "all", Verify::Checksums).unwrap();
    assert_eq!(merged.doc_store().dictionaries().unwrap(), dicts[..MAX_DICTIONARIES].to_vec());
    for (i, source) in inputs.iter().enumerate() {
        for old in 0..120 {
            let new = (i * 120) as u32 + old;
            assert_eq!(merged.stored(new).unwrap(), source.stored(old).unwrap(), "doc {new}");
            let expected = if i < MAX_DICTIONARIES { i } else { 0 };
            assert_eq!(merged.doc_store().dictionary_of(new), expected, "doc {new}");
        }
    }
}
