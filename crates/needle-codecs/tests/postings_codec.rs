//! Property tests of the grouped postings record: whatever is written reads
//! back (docs, frequencies, positions, offsets, block bounds), and skipping to
//! any target lands where a naive scan does, in short lists and in long ones
//! whose skip list is read a page at a time.

use needle_codecs::postings::{lone_doc, write_record, DiskPostings};
use needle_codecs::{Postings, TermPostings};
use needle_core::{DocSet, TERMINATED};
use needle_storage::FileSlice;
use proptest::prelude::*;

/// A document count no test list reaches: these records are written without a segment.
const ANY_DOC: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct List {
    docs: Vec<u32>,
    freqs: Vec<u32>,
    positions: Vec<u32>,
    offsets: Vec<(u32, u32)>,
    norms: Vec<u8>,
}

fn list() -> impl Strategy<Value = List> {
    list_of(1..700)
}

/// Lists of more than one skip page (32 blocks of 128).
fn long_list() -> impl Strategy<Value = List> {
    list_of(32 * 128 + 1..12_000)
}

fn list_of(len: std::ops::Range<usize>) -> impl Strategy<Value = List> {
    (len, 1u32..40, any::<u64>()).prop_map(|(n, gap, seed)| {
        let mut x = seed | 1;
        let mut next = move |m: u32| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % u64::from(m)) as u32
        };
        let mut l = List { docs: vec![], freqs: vec![], positions: vec![], offsets: vec![], norms: vec![] };
        let mut doc = next(gap);
        for _ in 0..n {
            l.docs.push(doc);
            let heavy = next(10) == 0;
            let f = 1 + next(if heavy { 300 } else { 4 });
            l.freqs.push(f);
            let mut p = next(5);
            let mut o = next(20);
            for _ in 0..f {
                l.positions.push(p);
                l.offsets.push((o, o + 1 + next(9)));
                p += 1 + next(50);
                o += 12 + next(30);
            }
            doc += 1 + next(gap);
        }
        l.norms = (0..=doc).map(|_| next(200) as u8 + 1).collect();
        l
    })
}

fn encode(l: &List, offsets: bool) -> FileSlice {
    FileSlice::from_vec("t.post", record_bytes(l, offsets))
}

/// Three bytes of padding, then `l`'s record (at offset 3).
fn record_bytes(l: &List, offsets: bool) -> Vec<u8> {
    let p = TermPostings {
        docs: &l.docs,
        freqs: &l.freqs,
        positions: &l.positions,
        offsets: &l.offsets,
        bloom: None,
    };
    let mut bytes = vec![0xAA; 3];
    write_record(&p, true, offsets, &l.norms, &mut bytes);
    bytes
}

/// Seeks `p` to `t` (targets ascend) and checks it lands where a scan of `l`
/// stops, with that document's frequency, positions and block end.
fn seek_and_check(p: &mut DiskPostings, l: &List, t: u32) -> Result<(), TestCaseError> {
    let got = p.seek(t);
    let want = l.docs.iter().position(|&d| d >= t);
    prop_assert_eq!(got, want.map_or(TERMINATED, |i| l.docs[i]));
    if let Some(i) = want {
        prop_assert_eq!(p.freq(), l.freqs[i]);
        let mut pos = Vec::new();
        p.positions(&mut pos);
        let start: usize = l.freqs[..i].iter().map(|&f| f as usize).sum();
        prop_assert_eq!(&pos[..], &l.positions[start..start + l.freqs[i] as usize]);
        let block_last = (i / 128 * 128 + 127).min(l.docs.len() - 1);
        prop_assert_eq!(p.block_end(got), l.docs[block_last]);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn records_round_trip(l in list(), offsets in any::<bool>()) {
        let file = encode(&l, offsets);
        let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
        prop_assert_eq!(p.doc_freq() as usize, l.docs.len());
        let (mut pos, mut off) = (Vec::new(), Vec::new());
        let mut occ = 0;
        for (i, &d) in l.docs.iter().enumerate() {
            prop_assert_eq!(p.doc(), d);
            prop_assert_eq!(p.freq(), l.freqs[i]);
            let f = l.freqs[i] as usize;
            p.positions(&mut pos);
            prop_assert_eq!(&pos[..], &l.positions[occ..occ + f]);
            p.offsets(&mut off);
            if offsets { prop_assert_eq!(&off[..], &l.offsets[occ..occ + f]); } else { prop_assert!(off.is_empty()); }
            let impact = p.impact(d, d);
            prop_assert!(impact.max_freq >= l.freqs[i] && impact.min_norm <= l.norms[d as usize]);
            let mut pairs = Vec::new();
            p.impacts(d, d, &mut pairs);
            let (freq, norm) = (l.freqs[i], l.norms[d as usize]);
            prop_assert!(pairs.iter().any(|&(f, n)| f >= freq && n <= norm), "no impact pair bounds doc {} ({}, {}): {:?}", d, freq, norm, pairs);
            prop_assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "impacts not a frontier: {:?}", pairs);
            occ += f;
            p.advance();
        }
        prop_assert_eq!(p.doc(), TERMINATED);
        prop_assert_eq!(p.advance(), TERMINATED);
    }

    /// A one-document record of up to 8 occurrences (the compact kind) gives
    /// its doc from its first bytes; any other record is left to be opened.
    #[test]
    fn a_lone_record_gives_its_doc_from_its_first_bytes(l in list_of(1..4), offsets in any::<bool>()) {
        let file = encode(&l, offsets);
        let lone = l.docs.len() == 1 && l.freqs[0] <= 8;
        prop_assert_eq!(lone_doc(&file, 3, ANY_DOC).unwrap(), lone.then(|| l.docs[0]));
        if lone {
            let past = lone_doc(&file, 3, l.docs[0]).unwrap_err().to_string();
            prop_assert!(past.contains("doc id out of range"), "{}", past);
        }
    }

    #[test]
    fn seeks_land_where_a_scan_does(l in list(), targets in proptest::collection::vec(any::<u32>(), 1..40)) {
        let file = encode(&l, true);
        let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
        let max = *l.docs.last().unwrap() + 3;
        let mut targets: Vec<u32> = targets.into_iter().map(|t| t % max).collect();
        targets.sort_unstable();
        for t in targets {
            seek_and_check(&mut p, &l, t)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn long_lists_seek_and_bound_every_range(
        l in long_list(),
        picks in proptest::collection::vec((any::<u32>(), 0u32..5000), 1..30),
    ) {
        let file = encode(&l, false);
        let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
        let max = *l.docs.last().unwrap() + 3;
        let mut picks: Vec<(u32, u32)> = picks.into_iter().map(|(t, span)| (t % max, span)).collect();
        picks.sort_unstable();
        let mut pairs = Vec::new();
        for (t, span) in picks {
            // A bound over `t..=t+span`, asked before the iterator gets there, covers every document in it.
            let to = t.saturating_add(span);
            let bound = p.impact(t, to);
            pairs.clear();
            p.impacts(t, to, &mut pairs);
            for (i, &d) in l.docs.iter().enumerate().filter(|(_, &d)| d >= t && d <= to) {
                let (freq, norm) = (l.freqs[i], l.norms[d as usize]);
                prop_assert!(bound.max_freq >= freq && bound.min_norm <= norm, "bound {:?} misses doc {}", bound, d);
                prop_assert!(pairs.iter().any(|&(f, n)| f >= freq && n <= norm), "no pair bounds doc {}", d);
            }
            seek_and_check(&mut p, &l, t)?;
        }
        let whole = p.max_impact();
        prop_assert_eq!(whole.max_freq, *l.freqs.iter().max().unwrap());
        prop_assert!(needle_core::read_error::check().is_ok());
    }
}

/// A long list iterates to its end, telling on each document the ones after it in its block.
#[test]
fn long_lists_iterate_to_the_end() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let l = list_of(20_000..20_001).new_tree(&mut runner).unwrap().current();
    let file = encode(&l, true);
    let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
    for (i, &d) in l.docs.iter().enumerate() {
        assert_eq!((p.doc(), p.freq()), (d, l.freqs[i]));
        let block_end = (i / 128 * 128 + 128).min(l.docs.len());
        assert_eq!(p.block_ahead(), &l.docs[i + 1..block_end], "the rest of the block after doc {i}");
        p.advance();
    }
    assert_eq!(p.doc(), TERMINATED);
}

/// Seeking a long list to one document reads its skip index and one page
/// of skip entries, not the whole skip list.
#[test]
fn a_seek_in_a_long_list_reads_one_page_of_its_skip_list() {
    use needle_storage::counters::{self, DataKind};
    let n = 100_000u32;
    let l = List {
        docs: (0..n).map(|i| i * 3).collect(),
        freqs: (0..n).map(|i| 1 + i % 5).collect(),
        positions: (0..n).flat_map(|i| 0..1 + i % 5).collect(),
        offsets: (0..n).flat_map(|i| (0..1 + i % 5).map(|j| (j * 10, j * 10 + 4))).collect(),
        norms: (0..3 * n).map(|i| (i % 200) as u8 + 1).collect(),
    };
    let file = encode(&l, false);
    let header = needle_codecs::postings::read_header(&file, 3).unwrap();
    counters::start();
    let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
    assert_eq!(p.seek(150_000), 150_000);
    let read = counters::finish().needed(DataKind::Skip);
    // 782 blocks: the index has 25 entries, a page 32 of the 782 skip entries.
    assert!(read * 8 < header.header_and_skip as u64, "read {read} of {} skip bytes", header.header_and_skip);
}

/// A skip page is read only when iteration reaches it, after the file was
/// opened (with only its footer checked, a corrupt page is found then): the
/// list ends there and keeps an error naming the file, and nothing panics.
#[test]
fn a_corrupt_skip_page_ends_the_list_with_an_error() {
    let n = 10_000u32;
    let l = List {
        docs: (0..n).map(|i| i * 2).collect(),
        freqs: vec![1; n as usize],
        positions: vec![0; n as usize],
        offsets: vec![(0, 1); n as usize],
        norms: vec![1; 2 * n as usize],
    };
    let header = needle_codecs::postings::read_header(&encode(&l, false), 3).unwrap();
    let mut bytes = encode(&l, false).read_all().unwrap().to_vec();
    // The last bytes of the skip zone are the last page's entries.
    let end = 3 + header.header_and_skip;
    bytes[end - 24..end].fill(0xFF);
    let mut p = DiskPostings::open(&FileSlice::from_vec("t.post", bytes), 3, ANY_DOC).unwrap();
    let mut seen = 0;
    while p.doc() != TERMINATED {
        seen += 1;
        p.advance();
    }
    assert!(seen < n && seen >= 64 * 128, "iterated {seen} documents");
    let error = needle_core::read_error::check().expect_err("the corrupt page is reported").to_string();
    assert!(error.contains("t.post"), "{error}");
}

#[test]
fn a_header_pointing_outside_the_file_is_an_error_naming_it() {
    let l =
        List { docs: vec![5], freqs: vec![1], positions: vec![0], offsets: vec![(0, 3)], norms: vec![1; 6] };
    let file = encode(&l, true);
    assert!(DiskPostings::open(&file, 3, ANY_DOC).is_ok());
    assert!(DiskPostings::open(&file, 10_000, ANY_DOC).err().unwrap().to_string().contains("t.post"));
    let mut cut = file.read_all().unwrap().to_vec();
    cut.truncate(cut.len() - 2);
    assert!(DiskPostings::open(&FileSlice::from_vec("t.post", cut), 3, ANY_DOC).is_err());
}

/// A record of one block leaves out of its skip entry the sizes the header
/// holds, and a record of one document has no doc block: its doc and
/// frequency are the skip entry's and the header's.
#[test]
fn one_block_records_leave_out_what_their_header_says() {
    use needle_codecs::postings::read_header;
    let lone = List {
        docs: vec![70_000],
        freqs: vec![3],
        positions: vec![2, 9, 40],
        offsets: vec![(5, 9), (30, 34), (200, 204)],
        norms: vec![7; 70_001],
    };
    let file = encode(&lone, true);
    let header = read_header(&file, 3).unwrap();
    assert_eq!((header.docs, header.doc_freq, header.total_term_freq), (0, 1, 3));
    // Start deltas 5, 25, 170 (a byte, a byte, two), one length for all.
    assert_eq!((header.positions, header.offsets), (3, 5), "{header:?}");
    // A compact record: Flags, then its entry: the doc and the frequency in 3 bytes, no norm.
    assert_eq!(header.header_and_skip, 1 + 3, "{header:?}");
    let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
    assert_eq!((p.doc(), p.freq()), (70_000, 3));
    let mut pairs = Vec::new();
    p.impacts(0, 70_000, &mut pairs);
    assert_eq!(pairs, [(3, 0)], "its bound: the frequency, and norm 0 for any length");
    let mut pos = Vec::new();
    p.positions(&mut pos);
    assert_eq!(pos, lone.positions);
    let mut offsets = Vec::new();
    p.offsets(&mut offsets);
    assert_eq!(offsets, lone.offsets);
    assert_eq!(p.advance(), TERMINATED);
    // The doc must be below the segment's count, as a decoded block's are.
    assert!(DiskPostings::open(&file, 3, 70_000).is_err());
    // Past a frequency of 8 the record has the full header: DocFreq, ExtraFreq,
    // SkipBytes, PosBytes, OffBytes besides the flags.
    let frequent = List {
        docs: vec![70_000],
        freqs: vec![9],
        positions: (0..9).collect(),
        offsets: (0..9).map(|i| (i * 5, i * 5 + 4)).collect(),
        norms: vec![7; 70_001],
    };
    let file = encode(&frequent, true);
    let header = read_header(&file, 3).unwrap();
    assert_eq!((header.doc_freq, header.total_term_freq, header.positions), (1, 9, 9));
    assert_eq!(header.header_and_skip, 6 + 4, "{header:?}");
    let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
    p.positions(&mut pos);
    assert_eq!((p.doc(), p.freq(), &pos), (70_000, 9, &frequent.positions));

    // 128 documents: one block, a compact record: its skip entry is its last doc and its
    // impacts only, and its header leaves out the sizes of that entry and of its doc block.
    let many = |n: u32| List {
        docs: (0..n).map(|i| i * 2).collect(),
        freqs: vec![1; n as usize],
        positions: vec![0; n as usize],
        offsets: vec![(0, 1); n as usize],
        norms: vec![1; 2 * n as usize],
    };
    let h = read_header(&encode(&many(128), true), 3).unwrap();
    let vint = |v: usize| (usize::BITS - v.max(1).leading_zeros()).div_ceil(7) as usize;
    let entry = vint(254) + 3; // last doc 254; one impact: count, frequency, norm
    let header = 1 + vint(128) + vint(0) + vint(h.positions) + vint(h.offsets);
    assert_eq!(h.header_and_skip, header + entry, "{h:?}");
    for n in [2, 127, 128] {
        let l = many(n);
        let file = encode(&l, true);
        let h = read_header(&file, 3).unwrap();
        assert_eq!(h.doc_freq, n);
        let mut p = DiskPostings::open(&file, 3, ANY_DOC).unwrap();
        let mut docs = Vec::new();
        while p.doc() != TERMINATED {
            docs.push(p.doc());
            p.advance();
        }
        assert_eq!(docs, l.docs);
    }

    // A two-block record claiming to be one block is refused, naming the fault.
    let mut bytes = record_bytes(&many(129), true);
    bytes[3] |= 128;
    let error = DiskPostings::open(&FileSlice::from_vec("t.post", bytes), 3, ANY_DOC).err().unwrap();
    assert!(error.to_string().contains("one-block record"), "{error}");
}

/// A record of `n` postings with filters: (its bytes, the doc ids, the before and after filters).
fn bloom_record(n: u32) -> (Vec<u8>, Vec<u32>, Vec<u8>, Vec<u8>) {
    bloom_record_from(n, 1, |i| 1 + i % 7)
}

/// [`bloom_record`] keeping filters from frequency `min_freq`, posting `i` of frequency `freq(i)`.
fn bloom_record_from(
    n: u32,
    min_freq: u32,
    freq: impl Fn(u32) -> u32,
) -> (Vec<u8>, Vec<u32>, Vec<u8>, Vec<u8>) {
    let shape = needle_codecs::bloom::BloomParams::for_rate(5, 0.0009, vec![]).shape;
    bloom_record_shaped(n, shape.with_min_freq(min_freq), freq)
}

/// [`bloom_record_from`] with filters of `shape`.
fn bloom_record_shaped(
    n: u32,
    shape: needle_codecs::bloom::FilterShape,
    freq: impl Fn(u32) -> u32,
) -> (Vec<u8>, Vec<u32>, Vec<u8>, Vec<u8>) {
    use needle_codecs::bloom::{insert, term_hash};
    use needle_codecs::postings::BloomPostings;
    let docs: Vec<u32> = (0..n).map(|i| i * 2).collect();
    let freqs: Vec<u32> = (0..n).map(freq).collect();
    let occ: usize = freqs.iter().map(|&f| f as usize).sum();
    let positions: Vec<u32> = freqs.iter().flat_map(|&f| 0..f).collect();
    let offsets: Vec<(u32, u32)> = (0..occ as u32).map(|i| (i, i + 1)).collect();
    let total: usize = freqs.iter().map(|&f| shape.bytes(f)).sum();
    let (mut before, mut after) = (vec![0u8; total], vec![0u8; total]);
    let mut at = 0;
    for (i, &freq) in freqs.iter().enumerate() {
        let len = shape.bytes(freq);
        if i % 3 != 0 {
            insert(&mut before[at..at + len], term_hash(format!("b{i}").as_bytes()), shape.hashes(freq));
        }
        if i % 4 != 0 {
            insert(&mut after[at..at + len], term_hash(format!("a{i}").as_bytes()), shape.hashes(freq));
        }
        at += len;
    }
    let p = TermPostings {
        docs: &docs,
        freqs: &freqs,
        positions: &positions,
        offsets: &offsets,
        bloom: Some(BloomPostings { shape, before: &before, after: &after, kept: shape }),
    };
    let mut bytes = Vec::new();
    write_record(&p, true, true, &[], &mut bytes);
    (bytes, docs, before, after)
}

/// Reads the record of [`bloom_record`] at `offset` of `file` and tests every filter.
fn check_bloom_record(file: &FileSlice, offset: u64, docs: &[u32], before: &[u8], after: &[u8]) {
    check_bloom_record_from(file, offset, docs, before, after, 1);
}

/// [`check_bloom_record`] of a record keeping filters from frequency `min_freq`:
/// a test of a posting below it answers "unknown".
fn check_bloom_record_from(
    file: &FileSlice,
    offset: u64,
    docs: &[u32],
    before: &[u8],
    after: &[u8],
    min_freq: u32,
) {
    use needle_codecs::bloom::{term_hash, Side};
    let mut postings = DiskPostings::open(file, offset, ANY_DOC).unwrap();
    let (mut b, mut a) = (Vec::new(), Vec::new());
    for (i, &doc) in docs.iter().enumerate() {
        assert_eq!(postings.doc(), doc);
        let kept = postings.freq() >= min_freq;
        assert_eq!(
            postings.bloom_test(Side::Before, term_hash(format!("b{i}").as_bytes())),
            kept.then_some(i % 3 != 0)
        );
        assert_eq!(
            postings.bloom_test(Side::After, term_hash(format!("a{i}").as_bytes())),
            kept.then_some(i % 4 != 0)
        );
        postings.filters_into(&mut b, &mut a);
        postings.advance();
    }
    assert_eq!((&b[..], &a[..]), (before, after));
}

#[test]
fn bloom_filters_round_trip_and_find_what_was_inserted() {
    for n in [300, 5000] {
        let (bytes, docs, before, after) = bloom_record(n);
        check_bloom_record(&FileSlice::from_vec("t.post", bytes), 0, &docs, &before, &after);
    }
}

/// WiSER's shape, the default, is written as one byte; another shape as its
/// two numbers. Both read back.
#[test]
fn the_default_filter_shape_takes_one_byte() {
    use needle_codecs::bloom::BloomParams;
    use needle_codecs::postings::read_header;
    let mut header_bytes = Vec::new();
    for fp in [0.0009, 0.001] {
        let shape = BloomParams::for_rate(5, fp, vec![]).shape;
        // (Longer than a block: a compact record of one block holds WiSER's shape only.)
        let (bytes, docs, before, after) = bloom_record_shaped(300, shape, |_| 1);
        let file = FileSlice::from_vec("t.post", bytes);
        check_bloom_record(&file, 0, &docs, &before, &after);
        header_bytes.push(read_header(&file, 0).unwrap().header_and_skip);
    }
    // FpMillionths 1000 is a two-byte vint, beside MaxInsertions' one byte.
    assert_eq!(header_bytes[1] - header_bytes[0], 2, "{header_bytes:?}");
}

/// Filters kept from frequency 2 or 3: the postings below have none (a test
/// answers "unknown", so a phrase reads their positions), the others read
/// back as written, and a list none of whose postings keeps filters has none.
#[test]
fn filters_kept_from_a_frequency_leave_the_postings_below_without() {
    use needle_codecs::bloom::{term_hash, Side};
    use needle_codecs::postings::read_header;
    for min_freq in [2, 3] {
        for n in [1, 300, 5000] {
            let (bytes, docs, before, after) = bloom_record_from(n, min_freq, |i| 1 + i % 7);
            let file = FileSlice::from_vec("t.post", bytes);
            check_bloom_record_from(&file, 0, &docs, &before, &after, min_freq);
            let full = bloom_record(n).0.len();
            // (A one-document record keeping its two empty filters spends no byte on them.)
            assert!(
                file.len() < full || (n == 1 && file.len() == full),
                "{n} postings from {min_freq}: {} bytes, {full} keeping all",
                file.len()
            );
        }
    }
    let (bytes, ..) = bloom_record_from(200, 2, |_| 1);
    let file = FileSlice::from_vec("t.post", bytes);
    assert_eq!(read_header(&file, 0).unwrap().bloom, 0);
    let mut p = DiskPostings::open(&file, 0, ANY_DOC).unwrap();
    assert_eq!(p.bloom_test(Side::After, term_hash(b"a1")), None);
}

/// Postings files pass 4 GiB on large indexes: a record beyond it (in a sparse
/// file) must find its filters where they are, not 4 GiB earlier.
#[test]
fn bloom_filters_of_a_record_beyond_4_gib_are_found() {
    use std::io::{Seek, SeekFrom, Write};
    let (bytes, docs, before, after) = bloom_record(300);
    let tmp = tempfile::tempdir().unwrap();
    let offset = (4u64 << 30) + 4093;
    let mut f = std::fs::File::create(tmp.path().join("big.post")).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&bytes).unwrap();
    drop(f);
    for backend in needle_storage::Backend::ALL {
        let reads = needle_storage::ReadOptions::new(backend, 1 << 20).unwrap();
        let dir = needle_storage::Directory::open(tmp.path(), false).unwrap().with_reads(reads);
        check_bloom_record(&dir.open_read("big.post").unwrap(), offset, &docs, &before, &after);
    }
}

/// Version 2 records keep their filters after the offsets (flag bit 4 clear):
/// the same record moved to that order reads the same filters and positions.
#[test]
fn a_version_2_record_with_filters_last_reads_the_same() {
    use needle_codecs::postings::read_header;
    let (bytes, docs, before, after) = bloom_record(300);
    let h = read_header(&FileSlice::from_vec("t.post", bytes.clone()), 0).unwrap();
    let (docs_end, bloom_end) = (h.header_and_skip + h.docs, h.header_and_skip + h.docs + h.bloom);
    let mut v2 = bytes[..docs_end].to_vec();
    v2[0] &= !16;
    v2.extend_from_slice(&bytes[bloom_end..]);
    v2.extend_from_slice(&bytes[docs_end..bloom_end]);
    assert_eq!(v2.len(), bytes.len());
    let file = FileSlice::from_vec("t.post", v2);
    check_bloom_record(&file, 0, &docs, &before, &after);
    let mut postings = DiskPostings::open(&file, 0, ANY_DOC).unwrap();
    let mut positions = Vec::new();
    for i in 0..docs.len() as u32 {
        postings.positions(&mut positions);
        assert_eq!(positions, (0..1 + i % 7).collect::<Vec<_>>(), "positions of posting {i}");
        postings.advance();
    }
}

/// The phrase cost model's view of a list: pages a read would add. A record
/// on one page costs nothing more once its doc ids are read; in a long one,
/// a block's positions and filters cost pages until read, then nothing.
#[test]
fn read_cost_counts_the_pages_a_read_would_add() {
    use needle_codecs::Part;
    let (small, ..) = bloom_record(20);
    assert!(small.len() < 4096);
    let mut p = DiskPostings::open(&FileSlice::from_vec("t.post", small), 0, ANY_DOC).unwrap();
    assert_eq!((p.read_cost(Part::Positions), p.read_cost(Part::Filters)), (0, 0));
    p.seek(30);
    assert_eq!((p.read_cost(Part::Positions), p.read_cost(Part::Filters)), (0, 0));

    let (long, docs, ..) = bloom_record(20_000);
    let file = FileSlice::from_vec("t.post", long);
    let mut p = DiskPostings::open(&file, 0, ANY_DOC).unwrap();
    p.seek(docs[128 * 40]);
    assert!(p.read_cost(Part::Positions) >= 1, "block 40's positions lie pages past its doc ids");
    let mut buf = Vec::new();
    p.positions(&mut buf);
    assert_eq!(p.read_cost(Part::Positions), 0, "read now");
    p.advance();
    assert_eq!(p.read_cost(Part::Positions), 0, "same block");
    assert!(p.read_cost(Part::Filters) >= 1, "block 40's filters lie pages past its doc ids");
    p.bloom_test(needle_codecs::bloom::Side::After, 7);
    assert_eq!(p.read_cost(Part::Filters), 0, "read now");
    p.seek(docs[128 * 100]);
    assert!(p.read_cost(Part::Positions) >= 1, "a later block's positions are on pages not read");
}

/// A list read to its end through a file asks for its blocks ahead, in a few
/// batches (the device is waited for a few times, not once a page); seeks far
/// apart read only the pages they land on.
#[test]
fn a_list_read_in_order_is_read_ahead_and_far_seeks_are_not() {
    use needle_storage::{counters, Backend, Directory, ReadOptions};
    let n = 100_000u32;
    let l = List {
        // Gaps up to 1,000: some 40 pages of doc ids and frequencies.
        docs: (0..n)
            .scan(0, |doc, i| {
                *doc += 1 + i * 7919 % 1000;
                Some(*doc)
            })
            .collect(),
        freqs: (0..n).map(|i| 1 + i % 5).collect(),
        positions: (0..n).flat_map(|i| 0..1 + i % 5).collect(),
        offsets: vec![],
        norms: vec![1; 1001 * n as usize],
    };
    let tmp = tempfile::tempdir().unwrap();
    let bytes = record_bytes(&l, false);
    std::fs::write(tmp.path().join("t.post"), &bytes).unwrap();
    let header = needle_codecs::postings::read_header(&FileSlice::from_vec("t.post", bytes), 3).unwrap();
    let doc_pages = header.docs / 4096;
    assert!(doc_pages >= 40, "a list of {doc_pages} pages of docs");
    for backend in [Backend::Pread, Backend::Direct] {
        let file = || {
            let reads = ReadOptions::new(backend, 64 << 20).unwrap();
            Directory::open(tmp.path(), false).unwrap().with_reads(reads).open_read("t.post").unwrap()
        };

        let file_in_order = file();
        counters::start();
        let mut p = DiskPostings::open(&file_in_order, 3, ANY_DOC).unwrap();
        let mut seen = 0;
        while p.doc() != TERMINATED {
            assert_eq!(p.doc(), l.docs[seen]);
            seen += 1;
            p.advance();
        }
        let in_order = counters::finish();
        assert_eq!(seen, n as usize);
        let label = backend.name();
        assert!(
            in_order.storage_waits <= 8,
            "{label}: {} waits for {doc_pages} pages",
            in_order.storage_waits
        );
        // Read ahead, not past: the docs, their skip pages, and at most a
        // window's run beyond where the list ends.
        let most = header.header_and_skip + header.docs + 64 * 4096;
        assert!(in_order.storage_bytes as usize <= most, "{label}: {in_order:?}");

        let file_far = file();
        counters::start();
        let mut p = DiskPostings::open(&file_far, 3, ANY_DOC).unwrap();
        for target in [l.docs[30_000], l.docs[60_000], l.docs[90_000]] {
            assert_eq!(p.seek(target), target);
        }
        let far = counters::finish();
        assert!(
            far.storage_bytes <= 8 * 4096,
            "{label}: far seeks read {} bytes: {far:?}",
            far.storage_bytes
        );
    }
}

/// The writer pads so that what a search reads of a record (all but its
/// offsets) stays on one page when it fits one; the offsets, read only to
/// highlight, may cross into the next page rather than cost padding.
#[test]
fn padding_keeps_the_searched_part_on_a_page_and_lets_offsets_cross() {
    use needle_codecs::page::PAGE;
    use needle_codecs::postings::read_header;
    use needle_codecs::{termmap, SegmentReader, SegmentWriter};
    use needle_storage::Directory;

    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let max_doc = 400u32;
    let mut w = SegmentWriter::create(&dir, "s", max_doc).unwrap();
    w.add_field(0, true, true, Some(vec![1; max_doc as usize]), u64::from(max_doc));
    // Terms of 1 to 60 documents, each occurring 3 times with long offsets:
    // records of tens to hundreds of bytes, a good part of them offsets.
    for t in 0..400u32 {
        let n = 1 + (t * 37) % 60;
        let docs: Vec<u32> = (0..n).map(|i| i * 6 + t % 6).collect();
        let freqs = vec![3; n as usize];
        let positions: Vec<u32> = (0..n).flat_map(|i| [i, i + 9, i + 700]).collect();
        let offsets: Vec<(u32, u32)> = (0..n)
            .flat_map(|i| [(i * 90, i * 90 + 7), (i * 500, i * 500 + 3), (70_000 + i, 70_900 + i)])
            .collect();
        let p = TermPostings {
            docs: &docs,
            freqs: &freqs,
            positions: &positions,
            offsets: &offsets,
            bloom: None,
        };
        w.add_term(0, format!("t{t:04}").as_bytes(), &p).unwrap();
    }
    w.write_docs(&mut |_| Ok(b"{}".to_vec())).unwrap();
    w.finish().unwrap();

    let seg = SegmentReader::open(&dir, "s").unwrap();
    let mut stream = seg.term_map().stream();
    let mut offsets_crossing = 0;
    while let Some((_, entry)) = fst::Streamer::next(&mut stream) {
        let (at, _) = termmap::unpack_entry(entry);
        let h = read_header(seg.postings_file(), at).unwrap();
        let searched = (h.header_and_skip + h.docs + h.bloom + h.positions) as u64;
        let whole = searched + h.offsets as u64;
        assert!(
            searched > PAGE || at / PAGE == (at + searched - 1) / PAGE,
            "record at {at} of {searched} bytes"
        );
        if whole <= PAGE && at / PAGE != (at + whole - 1) / PAGE {
            offsets_crossing += 1;
        }
    }
    assert!(offsets_crossing > 0, "no record's offsets cross a page: the writer padded for them");
}

/// A compact one-document record's flags say which of its filters it
/// stores: they read back, and flags claiming filters in a record without
/// any fail the open with an error naming the file.
#[test]
fn a_lone_record_finds_its_filters_from_its_flags() {
    use needle_codecs::bloom::{insert, term_hash, BloomParams, Side};
    use needle_codecs::postings::{read_header, BloomPostings};
    let shape = BloomParams::for_rate(5, 0.0009, vec![]).shape;
    let mut after = vec![0u8; shape.bytes(2)];
    insert(&mut after, term_hash(b"next"), shape.hashes(2));
    let before = vec![0u8; shape.bytes(2)];
    let p = TermPostings {
        docs: &[9],
        freqs: &[2],
        positions: &[3, 7],
        offsets: &[(20, 24), (40, 44)],
        bloom: Some(BloomPostings { shape, before: &before, after: &after, kept: shape }),
    };
    let mut bytes = Vec::new();
    write_record(&p, true, true, &[], &mut bytes);
    let file = FileSlice::from_vec("t.post", bytes.clone());
    let mut postings = DiskPostings::open(&file, 0, ANY_DOC).unwrap();
    assert_eq!((postings.doc(), postings.freq()), (9, 2));
    assert_eq!(postings.bloom_test(Side::After, term_hash(b"next")), Some(true));
    assert_eq!(postings.bloom_test(Side::Before, term_hash(b"next")), Some(false));
    let mut pos = Vec::new();
    postings.positions(&mut pos);
    assert_eq!(pos, [3, 7]);
    let header = read_header(&file, 0).unwrap();
    // Flags, then the doc and frequency in a byte; then only the after filter.
    assert_eq!((header.header_and_skip, header.bloom), (2, shape.bytes(2)), "{header:?}");
    // Start deltas 20 and 20, one length (4, plus 1).
    assert_eq!((header.positions, header.offsets), (2, 3), "{header:?}");
    let mut damaged = bytes;
    damaged[0] = (damaged[0] & !4) | 16 | 64; // no filters, yet flags for both sides
    let error = DiskPostings::open(&FileSlice::from_vec("t.post", damaged), 0, ANY_DOC).err().unwrap();
    assert!(error.to_string().contains("t.post"), "{error}");
}

/// A compact record is parsed to be opened (one of one document whole; of
/// more, to the end of its doc block): offsets of several lengths, and a
/// record crossing into the next page (read then with the bytes past the
/// page), read back as written.
#[test]
fn compact_records_read_back_across_a_page() {
    use needle_codecs::postings::read_header;
    let lone = List {
        docs: vec![300],
        freqs: vec![8],
        positions: (0..8).map(|i| i * 1000).collect(),
        offsets: (0..8).map(|i| (i * 7000, i * 7000 + 3 + i % 3)).collect(),
        norms: vec![4; 301],
    };
    let block = List {
        docs: (0..100).map(|i| i * 3000).collect(),
        freqs: (0..100).map(|i| 1 + i % 4).collect(),
        positions: (0..100).flat_map(|i| 0..1 + i % 4).collect(),
        offsets: (0..100).flat_map(|i| (0..1 + i % 4).map(|j| (j * 10, j * 10 + 4))).collect(),
        norms: vec![4; 300_000],
    };
    for l in [lone, block] {
        let record = record_bytes(&l, true)[3..].to_vec();
        for at in [0, 4096 - 10, 4096 - record.len() + 1] {
            let mut bytes = vec![0xAA; at];
            bytes.extend_from_slice(&record);
            let file = FileSlice::from_vec("t.post", bytes);
            let h = read_header(&file, at as u64).unwrap();
            assert_eq!(h.header_and_skip + h.docs + h.positions + h.offsets, record.len());
            let mut p = DiskPostings::open(&file, at as u64, ANY_DOC).unwrap();
            let (mut pos, mut off) = (Vec::new(), Vec::new());
            let (mut all_pos, mut all_off) = (Vec::new(), Vec::new());
            let mut docs = Vec::new();
            while p.doc() != TERMINATED {
                docs.push(p.doc());
                p.positions(&mut pos);
                p.offsets(&mut off);
                all_pos.extend_from_slice(&pos);
                all_off.extend_from_slice(&off);
                p.advance();
            }
            assert_eq!(
                (docs, all_pos, all_off),
                (l.docs.clone(), l.positions.clone(), l.offsets.clone()),
                "at {at}"
            );
        }
    }
}
