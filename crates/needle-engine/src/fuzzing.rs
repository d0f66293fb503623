//! Entry points for fuzzing (the `fuzz/` folder, `cargo fuzz`) and for
//! replaying its corpus in `cargo test`: each feeds arbitrary bytes to one
//! reader the way the engine would, and ignores the errors it returns. A
//! panic, a hang or an allocation out of all proportion is the failure.
//!
//! A file that is checksummed whole gets a correct footer around the fuzzed
//! body, so the fuzzer explores the decoder behind the checksum, not the
//! checksum. Folders are made under `/dev/shm` (memory) when it exists.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use needle_codecs::bloom::Side;
use needle_codecs::docstore::DocStoreReader;
use needle_codecs::postings::DiskPostings;
use needle_codecs::{footer, Part, Postings};
use needle_core::{DocSet, TERMINATED};
use needle_search::{parse_query, parse_simple_query, Query, SearchOptions, SimpleOptions};
use needle_storage::{Directory, FileSlice};

use crate::deletes::DeleteBits;
use crate::document::parse_document;
use crate::manifest::Manifest;
use crate::schema::{FieldKind, Schema, SharedSchema};
use crate::updates::Updates;
use crate::wal::{self, OnDamage};
use crate::{AggKind, Index, IndexOptions, SearchRequest, SortBy, SortKey, Verify};

/// A query string, parsed against a schema with text, keyword and numeric
/// fields, and as a `simple_query_string` over its text fields (which must parse).
pub fn query(data: &[u8]) {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        let mapping = r#"{"properties": {"title": {"type": "text"}, "body": {"type": "text", "analyzer": "english"},
            "tag": {"type": "keyword"}, "year": {"type": "long"}, "score": {"type": "double"}, "ok": {"type": "boolean"}}}"#;
        Schema::from_mapping(mapping).expect("the fuzzing mapping is valid")
    });
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(q) = parse_query(text, schema) {
            let _ = q.rewrite();
        }
        // The search-box syntax takes any text in text fields.
        let fields =
            [(schema.field_id("title").expect("title"), 1.0), (schema.field_id("body").expect("body"), 2.0)];
        let simple = parse_simple_query(text, schema, &fields, &SimpleOptions::default());
        simple.expect("simple_query_string never fails on text fields").rewrite();
    }
}

/// A document line into a dynamic schema, then the same bytes as a mapping.
pub fn document(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let schema = SharedSchema::new(Schema::default());
    if let Ok((doc, current)) = parse_document(text, &schema, None) {
        let _ = crate::document::analyze(doc, &current);
    }
    let _ = Schema::from_mapping(text);
}

/// A manifest's JSON (with a correct footer).
pub fn manifest(data: &[u8]) {
    let _ = Manifest::decode(&with_footer(data, b"MANI", 1));
}

/// A deletion file's body (with a correct footer) for a segment of as many
/// documents as the first two bytes say.
pub fn deletes(data: &[u8]) {
    let Some((size, body)) = data.split_first_chunk::<2>() else { return };
    let max_doc = u32::from(u16::from_le_bytes(*size));
    let _ = DeleteBits::decode("fuzz.del.1", &with_footer(body, b"DELS", 1), max_doc);
}

/// An in-place updates file's body (with a correct footer) for a segment of
/// as many documents as the first two bytes say. What decodes is read for
/// every document (its updated values and version), and written again it
/// must read as it did.
pub fn updates(data: &[u8]) {
    let Some((size, body)) = data.split_first_chunk::<2>() else { return };
    let max_doc = u32::from(u16::from_le_bytes(*size));
    let Ok(read) = Updates::decode("fuzz.upd.1", &with_footer(body, b"DVUP", 2), max_doc) else { return };
    for doc in 0..max_doc {
        let _ = (read.of_doc(doc), read.version(doc));
    }
    let written = read.encode();
    let again = Updates::decode("fuzz.upd.2", &written, max_doc).expect("what was written reads");
    assert_eq!(again.encode(), written, "written again, an updates file reads as it did");
}

/// Write-ahead log files: the input cut at each `\n--\n` into up to four
/// files, each named by the start sequence number its first 8 bytes give,
/// replayed strictly and with truncation.
pub fn wal(data: &[u8]) {
    let dir = scratch("wal");
    for file in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let _ = std::fs::remove_file(file.path());
    }
    for part in split(data, b"\n--\n").take(4) {
        let start = part.get(8..16).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        let _ = std::fs::write(dir.join(wal::file_name(start % 1000)), part);
    }
    let Ok(directory) = Directory::open(&dir, false) else { return };
    for on_damage in [OnDamage::Fail, OnDamage::Truncate] {
        let _ = wal::replay(&directory, 0, on_damage, &mut |_, _| Ok(()));
    }
}

/// A postings file's body, read as a query would: `n:u8`, then `n` record
/// offsets (`u32`), the segment's document count (`u32`), then the body.
/// Each record is opened, walked with its positions, offsets, bounds and
/// filters, and opened again to be sought.
pub fn postings(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else { return };
    let n = usize::from(n % 9);
    let Some(head) = rest.get(..4 * n + 4) else { return };
    let word = |i: usize| u32::from_le_bytes(head[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    let max_doc = word(n);
    let file = FileSlice::from_vec("fuzz.post", rest[4 * n + 4..].to_vec());
    for offset in (0..n).map(word) {
        if let Ok(mut p) = DiskPostings::open(&file, u64::from(offset), max_doc) {
            walk(&mut p);
        }
        if let Ok(mut p) = DiskPostings::open(&file, u64::from(offset), max_doc) {
            let mut target = 0;
            while p.seek(target) != TERMINATED && target < max_doc {
                let _ = p.block_end(target);
                let _ = p.impact(target, target.saturating_add(300));
                target = p.doc().saturating_add(1 + target % 97);
            }
        }
    }
    needle_core::read_error::clear();
}

/// Everything a query may ask of a list, document by document.
fn walk(p: &mut DiskPostings) {
    let (mut positions, mut offsets, mut impacts) = (Vec::new(), Vec::new(), Vec::new());
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut doc = p.doc();
    while doc != TERMINATED {
        let _ = (p.freq(), p.block_ahead().len(), p.block_rest().0.len());
        p.positions(&mut positions);
        p.offsets(&mut offsets);
        impacts.clear();
        p.impacts(doc, doc.saturating_add(200), &mut impacts);
        let _ = (p.read_cost(Part::Positions), p.read_cost(Part::Filters), p.block_bytes(Part::Filters));
        let _ = p.bloom_test(Side::Before, u64::from(doc).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        before.clear();
        after.clear();
        let _ = p.filters_into(&mut before, &mut after);
        doc = p.advance();
    }
    let _ = (p.max_impact(), p.total_term_freq());
}

/// A document store's body, read as each format version: opened, every
/// document (up to 256) read whole, by its head and as a frame to copy.
pub fn docstore(data: &[u8]) {
    for version in 1..=needle_codecs::docstore::VERSION {
        let Ok(store) = DocStoreReader::open(FileSlice::from_vec("fuzz.docs", data.to_vec()), version) else {
            continue;
        };
        let docs: Vec<u32> = (0..store.count().min(256)).collect();
        store.prefetch(&docs);
        let _ = store.dictionary();
        for doc in docs {
            let _ = store.get(doc);
            let _ = store.head(doc);
            let _ = store.frame_bytes(doc);
        }
    }
}

/// A term map's body: opened (walked whole), then looked up and streamed by field.
pub fn termmap(data: &[u8]) {
    use fst::{IntoStreamer, Streamer};
    let Ok(map) = needle_codecs::termmap::open("fuzz.terms", data.to_vec()) else { return };
    for (field, term) in [(0u16, &b"doc-1"[..]), (1, b"the"), (2, b"needle"), (3, b""), (u16::MAX, b"x")] {
        let _ = map.get(needle_codecs::termmap::key(field, term));
    }
    let (from, to) = needle_codecs::termmap::field_keys(0);
    let mut ids = map.range().ge(&from).lt(&to).into_stream();
    while let Some((key, entry)) = ids.next() {
        let _ = (needle_codecs::termmap::split_key(key), needle_codecs::termmap::unpack_entry(entry));
    }
}

/// One file of a small valid index replaced: the first byte picks which
/// (postings, term map, norms, documents, segment meta), the rest is its
/// body. The index is opened (footers verified), checked, searched and
/// fetched from, as a user would.
pub fn segment(data: &[u8]) {
    let _ = segment_report(data);
}

/// [`segment`], returning the check report when the index opened (how the
/// corpus test knows its seeds reach the readers).
pub fn segment_report(data: &[u8]) -> Option<crate::CheckReport> {
    const KINDS: [(&str, &[u8; 4], u32); 6] = [
        ("post", needle_codecs::postings::KIND, needle_codecs::postings::VERSION),
        ("terms", b"TERM", 1),
        ("norms", b"NORM", 1),
        ("docs", needle_codecs::docstore::KIND, needle_codecs::docstore::VERSION),
        ("meta", b"META", 1),
        ("dv", needle_codecs::doc_values::KIND, needle_codecs::doc_values::VERSION),
    ];
    let (&pick, body) = data.split_first()?;
    let (ext, kind, version) = KINDS[usize::from(pick) % KINDS.len()];
    let dir = scratch("segment");
    let fuzzed = with_footer(body, kind, version);
    for (name, bytes) in base_index() {
        let bytes = match name.rsplit('.').next() {
            Some(e) if e == ext => fuzzed.clone(),
            Some("meta") => stamped_meta(bytes, (ext == "dv").then_some(&fuzzed)),
            _ => bytes.clone(),
        };
        std::fs::write(dir.join(name), bytes).ok()?;
    }
    let index = IndexOptions::default().verify(Verify::Footers).open(&dir).ok()?;
    let report = index.check();
    let searcher = index.searcher();
    for (q, highlight) in
        [("needle hay -fox", true), ("\"the needle\" \"quick brown\"~2", false), ("tag:the", false)]
    {
        let request = SearchRequest { highlight, ..SearchRequest::new(q) };
        let _ = searcher.search(&request);
    }
    for doc in ["doc-0", "doc-7", "doc-39"] {
        let _ = searcher.get(doc);
    }
    if let Ok(Query::Bool(mut b)) = searcher.parse("\"the hay\"~1 fast disk") {
        b.minimum_should_match = 2;
        let options = SearchOptions { top_k: 5, track_total_hits: u64::MAX, bloom: true };
        let _ = searcher.top_docs(&Query::Bool(b), options);
    }
    field_values(&index);
    Some(report)
}

/// Reads the doc values every way a query does: a range filter (block skip
/// index), sorts by a number and a keyword, aggregations of each kind of
/// field, `exists` on a binary field and each kind's values in the hits.
fn field_values(index: &Index) {
    let schema = index.schema();
    let field = |name: &str, kind| schema.field_id(name).map(|id| crate::AggField { id, kind });
    let (Some(year), Some(day), Some(kind), Some(blob)) = (
        field("year", FieldKind::Long),
        field("day", FieldKind::Date),
        field("kind", FieldKind::Keyword),
        field("blob", FieldKind::Binary),
    ) else {
        return;
    };
    let searcher = index.searcher();
    let millis = crate::DateFormat::new("epoch_millis").ok();
    let value_fields = [(year.id, None), (day.id, millis), (kind.id, None), (blob.id, None)]
        .map(|(field, date_format)| crate::DocValueField { field, date_format })
        .to_vec();
    let request = SearchRequest { top_k: 40, value_fields, ..SearchRequest::new("") };
    let _ = searcher.search_query(&Query::Exists(blob.id), &request);
    let range = Query::Range(crate::RangeQuery { field: year.id, lower: 1995, upper: 2010, indexed: None });
    for by in [
        SortBy::Field { field: day.id, missing: i64::MIN },
        SortBy::Keyword { field: kind.id, missing_first: true },
    ] {
        let sort = vec![SortKey { by, descending: true }];
        let _ = searcher.search_query(&range, &SearchRequest { sort, ..SearchRequest::new("") });
    }
    // A range counted alone (block by block) and behind a term (asked one document at a time).
    let count = SearchRequest { top_k: 0, track_total_hits: u64::MAX, ..SearchRequest::new("") };
    let _ = searcher.search_query(&range, &count);
    if let Ok(term) = searcher.parse("needle") {
        let both = Query::Bool(needle_search::BoolQuery {
            must: vec![term],
            filter: vec![range.clone()],
            ..Default::default()
        });
        let _ = searcher.search_query(&both, &SearchRequest::new(""));
    }
    let agg = |name: &str, kind, subs| crate::Aggregation {
        name: name.into(),
        kind,
        subs,
        format: None,
        missing: None,
    };
    let terms = AggKind::Terms {
        field: kind,
        size: 3,
        min_doc_count: 1,
        order: crate::TermsOrder::CountDesc,
        filter: Default::default(),
    };
    let stats = agg("s", AggKind::Metric(crate::Metric::Stats, year), vec![]);
    let days = AggKind::DateHistogram {
        field: day,
        interval: crate::DateInterval::Calendar(crate::CalendarUnit::Month),
        offset: -3 * 3_600_000,
        min_doc_count: 1,
        zone: crate::Zone::parse("Europe/Paris").expect("a zone"),
        extended_bounds: None,
        hard_bounds: Some((0, i64::MAX)),
    };
    let _ = searcher.aggregate(&Query::MatchAll, &[agg("k", terms, vec![stats]), agg("d", days, vec![])]);
}

/// Removes this thread's scratch folders.
pub fn clean_up() {
    for what in ["segment", "wal"] {
        let _ = std::fs::remove_dir_all(scratch(what));
    }
}

/// Seeds for the in-memory targets from the base index: (target, name, input).
pub fn file_seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let body = |ext: &str| {
        let (_, bytes) =
            base_index().iter().find(|(n, _)| n.ends_with(ext)).expect("the base index has the file");
        bytes[..bytes.len() - footer::FOOTER_LEN].to_vec()
    };
    let terms = needle_codecs::termmap::open("seed.terms", body(".terms")).expect("the base term map opens");
    let offsets = {
        use fst::Streamer;
        let mut all = Vec::new();
        let mut stream = terms.stream();
        while let Some((_, entry)) = stream.next() {
            all.push(needle_codecs::termmap::unpack_entry(entry).0 as u32);
        }
        all
    };
    let mut seeds = vec![
        ("docstore", "seed-base".to_string(), body(".docs")),
        ("termmap", "seed-base".into(), body(".terms")),
    ];
    // Postings seeds: eight records each, from the start, the middle and the end of the file.
    for (i, at) in [0, offsets.len() / 2, offsets.len().saturating_sub(8)].into_iter().enumerate() {
        let chosen = &offsets[at..(at + 8).min(offsets.len())];
        let mut seed = vec![chosen.len() as u8];
        chosen.iter().chain(&[40]).for_each(|w| seed.extend_from_slice(&w.to_le_bytes()));
        seed.extend_from_slice(&body(".post"));
        seeds.push(("postings", format!("seed-{i}"), seed));
    }
    seeds
}

/// The seed files of the `segment` target: each file of the base index, as
/// that target reads it (the pick byte, then the body without its footer).
pub fn segment_seeds() -> Vec<(String, Vec<u8>)> {
    let kinds = ["post", "terms", "norms", "docs", "meta", "dv"];
    base_index()
        .iter()
        .filter_map(|(name, bytes)| {
            let pick = kinds.iter().position(|k| name.ends_with(&format!(".{k}")))? as u8;
            let mut seed = vec![pick];
            seed.extend_from_slice(&bytes[..bytes.len() - footer::FOOTER_LEN]);
            Some((name.clone(), seed))
        })
        .collect()
}

/// The base segment's meta with no file stamps but the doc values file's
/// (whose stamp says the segment has one): taken from `dv` when it is fuzzed,
/// so a fuzzed file is read, not refused for not being the segment's own.
fn stamped_meta(meta: &[u8], dv: Option<&Vec<u8>>) -> Vec<u8> {
    let (len, _) = footer::verify("base.meta", meta, b"META", 1).expect("a valid meta");
    let mut json: serde_json::Value = serde_json::from_slice(&meta[..len]).expect("meta JSON");
    let files = json["files"].as_object_mut().expect("the base segment stamps its files");
    files.retain(|ext, _| ext == "dv");
    if let (Some(dv), Some(stamp)) = (dv, files.get_mut("dv")) {
        *stamp = serde_json::json!({"len": dv.len(), "crc": footer::stored_crc(dv)});
    }
    with_footer(json.to_string().as_bytes(), b"META", 1)
}

/// A small index of one segment, built once: its files by name.
fn base_index() -> &'static Vec<(String, Vec<u8>)> {
    static BASE: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = scratch("base");
        // Every field mapped, in the order the import added them when they were dynamic: the
        // seeds' files hold these field ids.
        let mapping = r#"{"properties": {"kind": {"type": "keyword"}, "day": {"type": "date"}, "blob": {"type": "binary"},
            "year": {"type": "long"}, "title": {"type": "text"}, "body": {"type": "text"}, "tag": {"type": "text"}}}"#;
        let mapping = Schema::from_mapping(mapping).expect("the base mapping is valid");
        let index = Index::open_or_create(&dir, Some(mapping)).expect("the base index is created");
        let writer = index
            .writer(crate::WriterOptions { durability: crate::Durability::Graceful, ..Default::default() });
        let writer = writer.expect("the base index's writer opens");
        let mut rng = Lcg(7);
        let lines: Vec<String> = (0..40).map(|i| base_document(&mut rng, i)).collect();
        let options =
            crate::ImportOptions { threads: 1, memory_bytes: 1 << 30, skip_bad: false, bloom: None };
        writer
            .import(&mut std::io::Cursor::new(lines.join("\n")), &options, &Default::default())
            .expect("import");
        writer.close().expect("close");
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("the base folder lists") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if name == "write.lock" {
                continue;
            }
            files.push((name, std::fs::read(&path).expect("a base file reads")));
        }
        files.sort();
        drop(index);
        let _ = std::fs::remove_dir_all(&dir);
        files
    })
}

/// A deterministic word picker (the testkit is a test-only crate).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

fn base_document(rng: &mut Lcg, i: usize) -> String {
    const WORDS: [&str; 14] = [
        "the", "of", "and", "needle", "hay", "stack", "search", "fast", "disk", "quick", "brown", "fox",
        "block", "merge",
    ];
    let mut sentence = |n: usize| (0..n).map(|_| WORDS[rng.next(WORDS.len())]).collect::<Vec<_>>().join(" ");
    let (title, body) = (sentence(4), sentence(150));
    let tag = ["the", "of", "and"][i % 3];
    // Some documents without a kind or a day, some with two kinds.
    let kind = ["", r#","kind":"red""#, r#","kind":["red","blue"]"#, r#","kind":"green""#][i % 4];
    let blob =
        ["", r#","blob":"AAEC""#, r#","blob":"""#, r#","blob":"/w==""#, r#","blob":"bmVlZGxl""#][i % 5];
    let day = if i.is_multiple_of(5) {
        String::new()
    } else {
        format!(r#","day":"20{:02}-0{}-1{}""#, i, 1 + i % 9, i % 10)
    };
    format!(
        r#"{{"id":"doc-{i}","title":"{title}","body":"{body}","tag":"{tag}","year":{}{kind}{day}{blob}}}"#,
        1990 + i
    )
}

fn with_footer(body: &[u8], kind: &[u8; 4], version: u32) -> Vec<u8> {
    let mut bytes = body.to_vec();
    footer::append(&mut bytes, kind, version);
    bytes
}

/// A folder for this thread's fuzzing of `what` (threads of one test
/// process must not rewrite files another has mapped), in memory when possible.
fn scratch(what: &str) -> PathBuf {
    let root = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let thread: String =
        format!("{:?}", std::thread::current().id()).chars().filter(char::is_ascii_digit).collect();
    let dir = root.join(format!("needle-fuzz-{}-{thread}-{what}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn split<'a>(data: &'a [u8], separator: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.windows(separator.len()).position(|w| w == separator) {
            Some(at) => {
                rest = Some(&current[at + separator.len()..]);
                Some(&current[..at])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed seeds of the `updates` target are files that decode (so
    /// the fuzzer starts inside the decoder, not at its first refusal).
    #[test]
    fn the_updates_seeds_decode() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/updates");
        for seed in ["seed-example", "seed-two-kinds"] {
            let data = std::fs::read(dir.join(seed)).unwrap();
            let (size, body) = data.split_first_chunk::<2>().unwrap();
            let max_doc = u32::from(u16::from_le_bytes(*size));
            let read = Updates::decode(seed, &with_footer(body, b"DVUP", 2), max_doc).unwrap();
            assert!(!read.is_empty(), "{seed}");
            updates(&data);
        }
    }
}
