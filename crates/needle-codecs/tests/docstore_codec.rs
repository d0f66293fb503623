//! The document store returns every document byte for byte, with and without
//! a trained dictionary, and each record's head alone; it aligns documents
//! that would straddle a page, keeps frames with their own dictionaries, and
//! still reads its formats 1 and 2.

use needle_codecs::docstore::{record, DocStoreReader, VERSION};
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
            let (len, _) = footer::verify_file(&file, b"DOCS", VERSION, true).unwrap();
            let store = DocStoreReader::open(file.slice(0..len), VERSION).unwrap();
            assert_eq!(store.count() as usize, docs.len());
            for (i, d) in docs.iter().enumerate() {
                assert_eq!(&store.get(i as u32).unwrap(), d, "{backend:?} cache {cache}");
                assert_eq!(
                    store.head(i as u32).unwrap(),
                    d[..record::head_len(d)],
                    "{backend:?} cache {cache}"
                );
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

/// Records as the engine writes them: ids short and long (past the bytes a
/// head is first read with), with and without versions.
fn text_records(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let id = format!("d{i}{}", "-".repeat(i % 7 * 20));
            let source = format!(
                r#"{{"title":"State of the Union {i}","body":"Fellow citizens {} of the Senate"}}"#,
                "and the House ".repeat(i % 17)
            );
            let rec = record::encode(&id, &source);
            match i % 3 {
                0 => rec,
                _ => {
                    record::with_version(&rec, record::DocVersion { version: i as u64, seq_no: 7 * i as u64 })
                }
            }
        })
        .collect()
}

#[test]
fn text_documents_round_trip_with_a_trained_dictionary() {
    round_trip(&text_records(3000));
}

/// The store `docs` make, without its footer.
fn store_body(docs: &[Vec<u8>]) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let mut w = SegmentWriter::create(&dir, "s", docs.len() as u32).unwrap();
    w.write_docs(&mut |i| Ok(docs[i as usize].clone())).unwrap();
    w.finish().unwrap();
    let file = dir.open_read("s.docs").unwrap();
    let (len, _) = footer::verify_file(&file, b"DOCS", VERSION, true).unwrap();
    file.slice(0..len).read_all().unwrap().to_vec()
}

/// Where the index of a store's `body` starts (its trailer says).
fn index_start(body: &[u8]) -> usize {
    let len = body.len();
    u64::from_le_bytes(body[len - 12..len - 4].try_into().unwrap()) as usize
}

/// Where `doc`'s frame is in a store's `body` and its length, read from the
/// packed index by its format (`docstore/index.rs`), apart from the reader.
fn frame_of(body: &[u8], doc: usize) -> (usize, usize) {
    let count = u32::from_le_bytes(body[body.len() - 4..].try_into().unwrap()) as usize;
    let mut pos = index_start(body);
    for b in 0..count.div_ceil(128) {
        let base = needle_codecs::bytes::read_vint_lenient(body, &mut pos) as usize;
        let n = (count - b * 128).min(128);
        let mut values = [[0u32; 128]; 3];
        for v in &mut values {
            needle_codecs::bitpack::decode_block(body, &mut pos, &mut v[..n]);
        }
        if doc / 128 == b {
            return (base + values[0][doc % 128] as usize, values[1][doc % 128] as usize);
        }
    }
    panic!("document {doc} past the index");
}

/// Enough text trains a dictionary, and it pays: the store is smaller than
/// the same sources compressed one by one without it.
#[test]
fn a_trained_dictionary_shrinks_the_store() {
    let docs = text_records(3000);
    let body = store_body(&docs);
    let store =
        DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body.clone()), VERSION).unwrap();
    let dict = store.dictionary().unwrap().expect("3000 documents train a dictionary");
    let without: usize = docs
        .iter()
        .map(|d| zstd::bulk::compress(&d[record::head_len(d)..], 3).unwrap().len() + record::head_len(d))
        .sum();
    let frames = body.len() - dict.len() - docs.len() * 16;
    assert!(frames * 10 < without * 9, "{frames} bytes with the dictionary, {without} without");
}

/// A head is read without decompressing the source: a store whose
/// compressed sources are garbled still gives it.
#[test]
fn a_head_is_read_without_its_source() {
    let docs = text_records(400);
    let mut body = store_body(&docs);
    let len = body.len();
    let doc = 307; // a long id with a version
    let store =
        DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body.clone()), VERSION).unwrap();
    let head = &docs[doc][..record::head_len(&docs[doc])];
    assert!(head.len() > 48, "the test wants a head past the first read");
    // The frame's last bytes (compressed source) garbled: the head still reads, the whole record does not.
    let (start, frame_len) = frame_of(&body, doc);
    assert!(start + frame_len <= index_start(&body) && len > index_start(&body));
    for b in &mut body[start + frame_len - 8..start + frame_len] {
        *b ^= 0x5a;
    }
    assert_eq!(store.get(doc as u32).unwrap(), docs[doc]);
    let garbled = DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body), VERSION).unwrap();
    assert_eq!(garbled.head(doc as u32).unwrap(), head);
    assert!(garbled.get(doc as u32).is_err());
    let record = record::decode("s.docs", head).unwrap();
    assert_eq!((record.version.version, record.source), (307, ""));
}

/// A merge's store: the dictionary of one input, that input's frames copied
/// as they are, other records compressed with it; every document reads back.
/// A frame whose header disagrees with the index is refused, not copied.
#[test]
fn frames_are_copied_into_a_store_with_the_same_dictionary() {
    use needle_codecs::docstore::{write_with_dictionary, StoredDoc};
    let (first, second) = (text_records(600), text_records(900)[600..].to_vec());
    let body = store_body(&first);
    let source =
        DocStoreReader::open(needle_storage::FileSlice::from_vec("a.docs", body.clone()), VERSION).unwrap();
    let dict = source.dictionary().unwrap().unwrap();
    assert!(!dict.is_empty(), "600 records train a dictionary");
    // Interleaved: copied frames and compressed records side by side.
    let merged: Vec<(bool, Vec<u8>)> =
        first.iter().zip(&second).flat_map(|(a, b)| [(true, a.clone()), (false, b.clone())]).collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let w = SegmentWriter::create(&dir, "m", merged.len() as u32).unwrap();
    let out = w.docs_output().unwrap();
    let stamp = write_with_dictionary(out, merged.len() as u32, &dict, &mut |i| {
        let i = i as usize;
        Ok(match merged[i] {
            (true, _) => StoredDoc::Frame(source.frame_bytes(i as u32 / 2).unwrap().unwrap()),
            (false, ref record) => StoredDoc::Record(record.clone()),
        })
    })
    .unwrap();
    let (store, _) = finish_store(&dir, w, "m", stamp);
    assert_eq!(store.dictionary().unwrap().unwrap(), dict);
    for (i, (_, record)) in merged.iter().enumerate() {
        assert_eq!(&store.get(i as u32).unwrap(), record, "document {i}");
    }
    // A frame whose compressed source lost its first byte (its header no longer parses) is refused.
    let mut garbled = body;
    let start = frame_of(&garbled, 0).0;
    let head_len = garbled[start] as usize;
    garbled[start + 1 + head_len] ^= 0xff;
    let bad = DocStoreReader::open(needle_storage::FileSlice::from_vec("a.docs", garbled), VERSION).unwrap();
    assert!(bad.frame_bytes(0).is_err());
}

/// Frames of stores with different dictionaries are copied with theirs (a
/// merge keeps its inputs' dictionaries); records are compressed with the
/// first. Every document reads back, and each says which dictionary it has.
#[test]
fn frames_are_copied_with_their_own_dictionaries() {
    use needle_codecs::docstore::{write_with_dictionaries, Frame, StoredDoc};
    let records = text_records(1500);
    let (a_docs, b_docs, new_docs) = (&records[..600], &records[600..1200], &records[1200..]);
    let open = |name: &str, body: Vec<u8>| {
        DocStoreReader::open(needle_storage::FileSlice::from_vec(name, body), VERSION).unwrap()
    };
    let (a, b) = (open("a.docs", store_body(a_docs)), open("b.docs", store_body(b_docs)));
    let dicts = [a.dictionary().unwrap().unwrap(), b.dictionary().unwrap().unwrap()];
    assert_ne!(dicts[0], dicts[1], "different documents train different dictionaries");
    // Runs of each source's frames and new records, in turns: (source, its doc).
    let order: Vec<(usize, u32)> = (0..900u32).map(|i| ((i as usize / 50) % 3, i / 3)).collect();
    let expected: Vec<&Vec<u8>> =
        order.iter().map(|&(s, d)| &[a_docs, b_docs, new_docs][s][d as usize]).collect();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let w = SegmentWriter::create(&dir, "m", order.len() as u32).unwrap();
    let dict_refs = [dicts[0].as_slice(), dicts[1].as_slice()];
    let stamp = write_with_dictionaries(w.docs_output().unwrap(), order.len() as u32, &dict_refs, &mut |i| {
        let (source, doc) = order[i as usize];
        Ok(match source {
            0 => StoredDoc::Frame(a.frame_bytes(doc).unwrap().unwrap()),
            1 => StoredDoc::Frame(Frame { dict: 1, ..b.frame_bytes(doc).unwrap().unwrap() }),
            _ => StoredDoc::Record(new_docs[doc as usize].clone()),
        })
    })
    .unwrap();
    let (store, mut body) = finish_store(&dir, w, "m", stamp);
    assert_eq!(store.dictionaries().unwrap(), dicts.to_vec());
    for (i, (&(source, doc), record)) in order.iter().zip(&expected).enumerate() {
        assert_eq!(&&store.get(i as u32).unwrap(), record, "document {i}");
        assert_eq!(store.dictionary_of(i as u32), [0, 1, 0][source], "document {i}");
        let copied = store.frame_bytes(i as u32).unwrap().unwrap();
        if source == 1 {
            assert_eq!(
                copied.bytes,
                b.frame_bytes(doc).unwrap().unwrap().bytes,
                "document {i} copied as it was"
            );
        }
    }
    // A frame naming a dictionary the store does not have is refused.
    let w = SegmentWriter::create(&dir, "bad", 1).unwrap();
    let e = write_with_dictionaries(w.docs_output().unwrap(), 1, &dict_refs, &mut |_| {
        Ok(StoredDoc::Frame(Frame { dict: 2, ..a.frame_bytes(0).unwrap().unwrap() }))
    })
    .err()
    .unwrap();
    assert!(e.to_string().contains("dictionary 2 of 2"), "{e}");
    // A run naming a dictionary the store does not have fails the open.
    let n = body.len();
    let (runs, dicts) = (
        u32::from_le_bytes(body[n - 20..n - 16].try_into().unwrap()) as usize,
        u32::from_le_bytes(body[n - 16..n - 12].try_into().unwrap()) as usize,
    );
    let dict_of = |&(source, _): &(usize, u32)| [0, 1, 0][source];
    let changes = order.windows(2).filter(|w| dict_of(&w[0]) != dict_of(&w[1])).count();
    assert_eq!(runs, changes + 1, "a run for each stretch of one dictionary");
    let second_run_dict = n - 20 - 8 * (runs + dicts) + 12;
    body[second_run_dict..second_run_dict + 4].copy_from_slice(&7u32.to_le_bytes());
    let e = DocStoreReader::open(needle_storage::FileSlice::from_vec("m.docs", body), VERSION).err().unwrap();
    assert!(e.to_string().contains("m.docs") && e.to_string().contains("name no dictionary"), "{e}");
    drop(w);
}

/// The store a writer wrote apart (as a merge does), finished and opened, and its body.
fn finish_store(
    dir: &Directory,
    mut w: SegmentWriter,
    name: &str,
    stamp: needle_codecs::meta::FileStamp,
) -> (DocStoreReader, Vec<u8>) {
    w.docs_written(stamp);
    w.finish().unwrap();
    let file = dir.open_read(&format!("{name}.docs")).unwrap();
    let (len, _) = footer::verify_file(&file, b"DOCS", VERSION, true).unwrap();
    let body = file.slice(0..len).read_all().unwrap().to_vec();
    (DocStoreReader::open(file.slice(0..len), VERSION).unwrap(), body)
}

/// The body of a store of format 1 or 2 with an empty dictionary: each
/// document's frame as `frame` makes it, the index, the trailer of those formats.
fn legacy_store(docs: &[Vec<u8>], frame: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let (mut body, mut index) = (Vec::new(), Vec::new());
    for d in docs {
        let frame = frame(d);
        index.extend_from_slice(&(body.len() as u64).to_le_bytes());
        index.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        index.extend_from_slice(&(d.len() as u32).to_le_bytes());
        body.extend_from_slice(&frame);
    }
    let index_start = body.len() as u64;
    body.extend_from_slice(&index);
    body.extend_from_slice(&0u64.to_le_bytes());
    body.extend_from_slice(&index_start.to_le_bytes());
    body.extend_from_slice(&(docs.len() as u32).to_le_bytes());
    body
}

/// A frame of format 2 or 3: the head, then the source compressed with no dictionary.
fn with_head(d: &[u8]) -> Vec<u8> {
    let head_len = record::head_len(d);
    let mut frame = Vec::new();
    needle_codecs::bytes::write_vint(&mut frame, head_len as u64);
    frame.extend_from_slice(&d[..head_len]);
    frame.extend_from_slice(&zstd::bulk::compress(&d[head_len..], 3).unwrap());
    frame
}

/// A store of format 2 (one dictionary, no runs) reads as it did, and its frames copy.
#[test]
fn a_format_2_store_is_still_read() {
    let docs = text_records(50);
    let body = legacy_store(&docs, with_head);
    let store = DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body), 2).unwrap();
    assert_eq!(store.dictionaries().unwrap(), vec![Vec::<u8>::new()]);
    for (i, d) in docs.iter().enumerate() {
        assert_eq!(&store.get(i as u32).unwrap(), d);
        assert_eq!(store.head(i as u32).unwrap(), d[..record::head_len(d)]);
        assert_eq!(store.frame_bytes(i as u32).unwrap().unwrap().dict, 0);
    }
}

/// A store of format 3 (a fixed 16-byte index entry a document, then the
/// runs and dictionary ends, frames with zstd's magic number) reads as it
/// did, and its frames copy into a store of today's format (without it).
#[test]
fn a_format_3_store_is_still_read() {
    let docs = text_records(300);
    let mut body = legacy_store(&docs, with_head);
    // Format 2's trailer (DictLen IndexStart DocCount) becomes format 3's
    // tables and trailer: one run with the one (empty) dictionary.
    let trailer = body.split_off(body.len() - 20);
    let index_start = u64::from_le_bytes(trailer[8..16].try_into().unwrap());
    body.extend_from_slice(&[0u8; 8]); // run: FirstDoc 0, DictNo 0
    body.extend_from_slice(&0u64.to_le_bytes()); // the dictionary ends at 0
    for field in [&1u32.to_le_bytes()[..], &1u32.to_le_bytes(), &index_start.to_le_bytes(), &trailer[16..]] {
        body.extend_from_slice(field);
    }
    let store = DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body.clone()), 3).unwrap();
    for (i, d) in docs.iter().enumerate() {
        assert_eq!(&store.get(i as u32).unwrap(), d);
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let out = needle_codecs::ChecksummedWriter::new(dir.create("c.docs").unwrap());
    needle_codecs::docstore::write_with_dictionary(out, docs.len() as u32, &[], &mut |i| {
        Ok(needle_codecs::docstore::StoredDoc::Frame(store.frame_bytes(i).unwrap().unwrap()))
    })
    .unwrap();
    let file = dir.open_read("c.docs").unwrap();
    let (len, _) = footer::verify_file(&file, b"DOCS", VERSION, true).unwrap();
    let copied = DocStoreReader::open(file.slice(0..len), VERSION).unwrap();
    for (i, d) in docs.iter().enumerate() {
        assert_eq!(&copied.get(i as u32).unwrap(), d);
    }
    assert!(len + 4 * docs.len() < body.len(), "copied frames without the magic number");
    // Read as format 4, the fixed entries are not a packed index.
    assert!(DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body.clone()), 4).is_err());
    // An entry pointing past the frames fails the open, naming the file and the document.
    let entry = index_start as usize + 200 * 16;
    let past = body.len() as u64;
    body[entry..entry + 8].copy_from_slice(&past.to_le_bytes());
    let e = DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body), 3)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("s.docs") && e.contains("document 200"), "{e}");
}

/// The index is read and checked when the store opens: a packed index
/// (format 4) that places a frame past the documents, or is cut short, is
/// an error naming the file then, not a bad read later.
#[test]
fn a_damaged_index_fails_the_open() {
    let docs = text_records(300);
    let body = store_body(&docs);
    let (len, index_start) = (body.len(), index_start(&body));
    // About four bytes a document, not sixteen.
    assert!(len - index_start < 6 * docs.len(), "index of {} bytes", len - index_start);
    let open =
        |body: Vec<u8>| DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body), VERSION);
    assert_eq!(open(body.clone()).unwrap().get(299).unwrap(), docs[299]);
    // The first block's base moved past the documents.
    let mut at = index_start;
    let base = needle_codecs::bytes::read_vint_lenient(&body, &mut at);
    let mut far = body[..index_start].to_vec();
    needle_codecs::bytes::write_vint(&mut far, base + index_start as u64);
    far.extend_from_slice(&body[at..]);
    let e = open(far).err().unwrap().to_string();
    assert!(e.contains("s.docs"), "{e}");
    // A byte fewer: the trailer no longer matches, or the index is cut short.
    let mut short = body.clone();
    short.remove(index_start + 3);
    assert!(open(short).is_err());
}

/// A store of format 1 (every record compressed whole, no head kept apart) reads as it did.
#[test]
fn a_format_1_store_is_still_read() {
    let docs = text_records(50);
    let body = legacy_store(&docs, |d| zstd::bulk::compress(d, 3).unwrap());
    let store = DocStoreReader::open(needle_storage::FileSlice::from_vec("s.docs", body), 1).unwrap();
    assert!(store.dictionary().unwrap().is_none(), "format 1 frames are never copied");
    assert!(store.frame_bytes(0).unwrap().is_none());
    for (i, d) in docs.iter().enumerate() {
        assert_eq!(&store.get(i as u32).unwrap(), d);
        assert_eq!(store.head(i as u32).unwrap(), d[..record::head_len(d)]);
    }
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
    let (len, _) = footer::verify_file(&file, b"DOCS", VERSION, true).unwrap();
    let store = DocStoreReader::open(file.slice(0..len), VERSION).unwrap();
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
