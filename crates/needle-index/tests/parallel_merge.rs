//! A merge that encodes its terms' records on several threads writes the
//! same segment, byte for byte, as one that encodes them on one: the records
//! are written in term order whatever thread made them, with the same
//! padding, statistics and per-field document counts.

use needle_analysis::Analyzer;
use needle_codecs::bloom::BloomParams;
use needle_codecs::{segment_files, SegmentRead, SegmentReader, Verify};
use needle_core::{Deletes, DocId, FieldId};
use needle_index::{merge_segments_paced, AnalyzedDoc, MemSegment, Merge};
use needle_storage::Directory;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const TAG: FieldId = 0;
const TEXT: FieldId = 1;

/// A segment of `docs` random documents over a vocabulary of some 6,000
/// words, a few of them in most documents (lists of many blocks, with
/// positions, offsets and filters); a keyword tag in two documents of three
/// (a field without norms, whose document count the merge works out).
fn write(dir: &Directory, name: &str, docs: u32, rng: &mut StdRng) -> SegmentReader {
    let analyzer = Analyzer::standard();
    let params = BloomParams::for_rate(5, 0.0009, vec![]).with_min_freq(2);
    let mut segment = MemSegment::new(name).with_bloom(Some(params));
    for doc in 0..docs {
        let words: Vec<String> = (0..rng.gen_range(1..60))
            .map(|_| match rng.gen_range(0..4) {
                0 => format!("common{}", rng.gen_range(0..4)),
                _ => format!("w{}", rng.gen_range(0..6000u32).pow(2) / 6000),
            })
            .collect();
        let mut analyzed = AnalyzedDoc::new(format!("{name} {doc}").into_bytes());
        if doc % 3 != 0 {
            analyzed.keyword(TAG, &[&format!("tag{}", rng.gen_range(0..50))]);
        }
        analyzed.text(TEXT, &analyzer, &[&words.join(" ")]);
        segment.add(analyzed);
    }
    segment.flush(dir, name).unwrap();
    SegmentReader::open_with(dir, name, Verify::Checksums).unwrap()
}

/// Every seventh document of a segment deleted.
struct EverySeventh;

impl Deletes for EverySeventh {
    fn is_deleted(&self, doc: DocId) -> bool {
        doc % 7 == 3
    }
}

fn merge(dir: &Directory, name: &str, inputs: &[(&SegmentReader, Option<&dyn Deletes>)], threads: usize) {
    let current: Vec<&dyn SegmentRead> = inputs.iter().map(|(s, _)| *s as &dyn SegmentRead).collect();
    let merge = Merge { current: &current, legacy: &|_, _| None, order: None, threads };
    merge_segments_paced(dir, name, inputs, &merge, &mut |_| {}).unwrap();
}

#[test]
fn a_merge_on_several_threads_writes_the_segment_one_thread_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let a = write(&dir, "seg_a", 1500, &mut rng);
    let b = write(&dir, "seg_b", 900, &mut rng);
    let c = write(&dir, "seg_c", 400, &mut rng);
    let inputs: Vec<(&SegmentReader, Option<&dyn Deletes>)> =
        vec![(&a, None), (&b, Some(&EverySeventh)), (&c, None)];
    // Enough terms for many batches, so the threads take turns.
    assert!(a.meta().fields.iter().map(|f| f.terms).sum::<u64>() > 4000);

    merge(&dir, "one", &inputs, 1);
    for threads in [2, 3] {
        let name = format!("many{threads}");
        merge(&dir, &name, &inputs, threads);
        for (one, many) in segment_files("one").iter().zip(segment_files(&name)) {
            if !dir.exists(one) {
                assert!(!dir.exists(&many), "{many} written on {threads} threads only");
                continue;
            }
            let (one_bytes, many_bytes) = (dir.read_all(one).unwrap(), dir.read_all(&many).unwrap());
            assert!(one_bytes == many_bytes, "{one} and {many} differ ({threads} threads)");
        }
        let merged = SegmentReader::open_with(&dir, &name, Verify::Checksums).unwrap();
        let tag = merged.meta().fields.iter().find(|f| f.field == TAG).unwrap();
        let live = |s: &SegmentReader, del: bool| (0..s.meta().max_doc).filter(move |d| !(del && d % 7 == 3));
        let tagged = live(&a, false).filter(|d| d % 3 != 0).count()
            + live(&b, true).filter(|d| d % 3 != 0).count()
            + live(&c, false).filter(|d| d % 3 != 0).count();
        assert_eq!(tag.stats.doc_count, tagged as u64);
    }
}
