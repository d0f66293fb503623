//! Which postings keep their phrase filters on disk (`needle_codecs::bloom`):
//! every posting of a list of one block; of a longer list, those of
//! frequency `min_freq` or more, and none when the list holds more than a
//! sixteenth of the segment's documents. A merge keeps what its sources kept,
//! whichever order they come in, and a test of a posting without filters
//! answers "unknown", never "absent".

use needle_analysis::Analyzer;
use needle_codecs::bloom::{term_hash, BloomParams, Side};
use needle_codecs::{SegmentRead, SegmentReader, Verify};
use needle_core::{DocSet, FieldId, TERMINATED};
use needle_index::{merge_segments, AnalyzedDoc, MemSegment};
use needle_storage::Directory;

const TEXT: FieldId = 1;

/// A segment of `docs` documents and then `filler` more of another word:
/// "common next" once in even documents and twice in odd ones, "rare next"
/// once in the first three, "lone" alone.
fn write(dir: &Directory, name: &str, docs: u32, filler: u32, min_freq: u32) -> SegmentReader {
    let analyzer = Analyzer::standard();
    let params = BloomParams::for_rate(5, 0.0009, vec![]).with_min_freq(min_freq);
    let mut segment = MemSegment::new(name).with_bloom(Some(params));
    for doc in 0..docs + filler {
        let mut text = String::from(if doc < docs { "common next lone" } else { "filler" });
        if doc % 2 == 1 && doc < docs {
            text.push_str(" and common next");
        }
        if doc < 3 {
            text.push_str(" rare next");
        }
        let mut analyzed = AnalyzedDoc::new(format!("{name} {doc}").into_bytes());
        analyzed.keyword(0, &[&format!("{name}-{doc}")]);
        analyzed.text(TEXT, &analyzer, &[&text]);
        segment.add(analyzed);
    }
    segment.flush(dir, name).unwrap();
    SegmentReader::open_with(dir, name, Verify::Checksums).unwrap()
}

/// Tests "next" after each posting of `term`: `Some(true)` where its
/// frequency keeps filters (`kept_from`), `None` below it.
fn check(segment: &SegmentReader, term: &str, kept_from: u32) {
    let mut p = segment.postings(TEXT, term.as_bytes()).unwrap().unwrap();
    let (next, absent) = (term_hash(b"next"), term_hash(b"absent"));
    let mut doc = p.doc();
    while doc != TERMINATED {
        let kept = p.freq() >= kept_from;
        let context = format!("{}: {term} in doc {doc}, freq {}", segment.name(), p.freq());
        assert_eq!(p.bloom_test(Side::After, next), kept.then_some(true), "{context}");
        assert_eq!(p.bloom_test(Side::After, absent), kept.then_some(false), "{context}");
        doc = p.advance();
    }
}

#[test]
fn longer_lists_keep_filters_from_their_segments_lowest_frequency() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    // "common" in a sixteenth of the documents: as rare as a list keeping filters may be.
    let long = write(&dir, "seg_a", 300, 15 * 300, 2);
    check(&long, "common", 2);
    check(&long, "rare", 1);
    let short = write(&dir, "seg_b", 100, 15 * 100, 2);
    check(&short, "common", 1);
    let old = write(&dir, "seg_c", 300, 15 * 300, 1);
    check(&old, "common", 1);
    // In more than a sixteenth, a list longer than a block keeps none.
    let dense = write(&dir, "seg_h", 300, 15 * 300 - 1, 1);
    check(&dense, "common", u32::MAX);
    check(&dense, "rare", 1);
    let dense_short = write(&dir, "seg_i", 100, 0, 2);
    check(&dense_short, "common", 1);

    // A long list from short ones keeps only what the longer rule keeps.
    for (name, sources) in [("seg_d", [&short, &long]), ("seg_e", [&long, &short])] {
        let inputs: Vec<_> = sources.iter().map(|s| (*s, None)).collect();
        merge_segments(&dir, name, &inputs).unwrap();
        let merged = SegmentReader::open_with(&dir, name, Verify::Checksums).unwrap();
        check(&merged, "common", 2);
        check(&merged, "rare", 1);
        assert!(merged.postings(TEXT, b"lone").unwrap().is_some());
    }
    // Segments keeping every filter (written before `min_freq`) merge with one that does not.
    merge_segments(&dir, "seg_f", &[(&old, None), (&short, None)]).unwrap();
    let merged = SegmentReader::open_with(&dir, "seg_f", Verify::Checksums).unwrap();
    check(&merged, "common", 2);
    // Short lists stay whole.
    merge_segments(&dir, "seg_g", &[(&short, None), (&short, None)]).unwrap();
    let merged = SegmentReader::open_with(&dir, "seg_g", Verify::Checksums).unwrap();
    check(&merged, "rare", 1);
}
