//! Corruption: flipping any byte of any index file, or truncating it, must be
//! found with an error that names the file: by opening the index with
//! `Verify::Checksums`, and by the default open (footers and small files)
//! or, where that does not read the bytes, by `check`; never a panic.

mod common;

use std::fs;

use needle_engine::{Index, Verify};
use needle_testkit::random;
use rand::Rng;

fn build(path: &std::path::Path) {
    let mut rng = random::rng(7);
    let index = common::new_index(path);
    let lines: Vec<String> = (0..300).map(|i| random::document(&mut rng, i).to_string()).collect();
    common::import_lines(&index, &lines[..150], 1 << 20).unwrap();
    common::import_lines(&index, &lines[150..], 1 << 20).unwrap();
    // A segment with doc values, a deletion file and an updates file.
    let writer = common::writer(&index);
    writer.add(r#"{"id":"num","n":5,"title":"numbers"}"#).unwrap();
    writer.update_numeric("doc-3", "n", &serde_json::json!(7), needle_engine::IfCurrent::Any).unwrap();
    writer.delete("doc-4").unwrap();
    writer.close().unwrap();
}

fn index_files(path: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "write.lock")
        .collect();
    names.sort();
    names
}

fn assert_open_fails_naming(path: &std::path::Path, file: &str, what: &str) {
    match Index::options().verify(Verify::Checksums).open(path) {
        Ok(_) => panic!("index opened with {file} {what}"),
        Err(e) => assert!(e.to_string().contains(file), "{file} {what}: error does not name the file: {e}"),
    }
    match Index::open(path) {
        Err(e) => assert!(e.to_string().contains(file), "{file} {what}: error does not name the file: {e}"),
        Ok(index) => {
            let report = index.check();
            assert!(
                !report.ok && report.problems.iter().any(|p| p.contains(file)),
                "{file} {what}: opened by footers and passed check: {report:?}"
            );
        }
    }
}

#[test]
fn every_flipped_byte_is_reported_with_the_file_name() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    let mut rng = random::rng(11);
    let files = index_files(tmp.path());
    let kinds = [".dv", ".del.", ".upd."];
    assert!(kinds.iter().all(|k| files.iter().any(|f| f.contains(k))), "{kinds:?} among {files:?}");
    for name in files {
        let path = tmp.path().join(&name);
        let original = fs::read(&path).unwrap();
        // Every byte of small files; the ends and a random sample of large ones.
        let positions: Vec<usize> = if original.len() <= 4096 {
            (0..original.len()).collect()
        } else {
            (0..64)
                .chain(original.len() - 64..original.len())
                .chain((0..300).map(|_| rng.gen_range(0..original.len())))
                .collect()
        };
        for pos in positions {
            let mut bad = original.clone();
            bad[pos] ^= 1 << rng.gen_range(0..8);
            fs::write(&path, &bad).unwrap();
            assert_open_fails_naming(tmp.path(), &name, &format!("flipped at byte {pos}"));
        }
        fs::write(&path, &original).unwrap();
    }
    Index::open(tmp.path()).expect("restored index opens");
}

#[test]
fn every_truncation_is_reported_with_the_file_name() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    for name in index_files(tmp.path()) {
        let path = tmp.path().join(&name);
        let original = fs::read(&path).unwrap();
        let step = (original.len() / 97).max(1);
        for len in (0..original.len()).step_by(step).chain([original.len() - 1]) {
            fs::write(&path, &original[..len]).unwrap();
            assert_open_fails_naming(tmp.path(), &name, &format!("truncated to {len} bytes"));
        }
        fs::write(&path, &original).unwrap();
    }
}

#[test]
fn a_missing_segment_file_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    let victim = index_files(tmp.path()).into_iter().find(|n| n.ends_with(".norms")).unwrap();
    fs::remove_file(tmp.path().join(&victim)).unwrap();
    assert_open_fails_naming(tmp.path(), &victim, "deleted");
}

/// `Verify::Footers` reads a few pages of a large index: it checks the meta
/// and norms files whole, and the term map, postings and document store by
/// their footers only, so truncations and bad footers still fail at open.
#[test]
fn footers_mode_checks_small_files_whole_and_large_files_by_their_footer() {
    use needle_engine::Verify;
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    let files = index_files(tmp.path());
    let of = |ext: &str| files.iter().find(|n| n.ends_with(ext)).unwrap().clone();
    let opens =
        |verify| Index::options().verify(verify).open(tmp.path()).map(|_| ()).map_err(|e| e.to_string());
    for (ext, footers_finds_it) in [(".post", false), (".docs", false), (".norms", true), (".meta", true)] {
        let name = of(ext);
        let path = tmp.path().join(&name);
        let original = fs::read(&path).unwrap();
        let mut bad = original.clone();
        bad[original.len() / 2] ^= 0x55;
        fs::write(&path, &bad).unwrap();
        assert!(opens(Verify::Checksums).unwrap_err().contains(&name), "{name}");
        assert_eq!(opens(Verify::Footers).is_err(), footers_finds_it, "{name} flipped in the middle");
        fs::write(&path, &original[..original.len() - 1]).unwrap();
        assert!(opens(Verify::Footers).unwrap_err().contains(&name), "{name} truncated");
        fs::write(&path, &original).unwrap();
        assert!(opens(Verify::Footers).is_ok() && opens(Verify::Checksums).is_ok());
    }
}

/// Opened by footers only, an index with corrupt postings or documents
/// answers a query with an error naming the file (or, where the damage is
/// in bytes the query does not decode, answers): never a panic.
#[test]
fn queries_on_corrupt_bytes_opened_by_footers_fail_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    let mut rng = random::rng(13);
    let queries = [
        "the",
        "needle hay",
        "+of +and",
        "\"the needle\"",
        "title:fox OR body:stack",
        "tag:the",
        "\"quick brown\"~2",
        "numbers",
    ];
    for name in index_files(tmp.path()).into_iter().filter(|n| n.ends_with(".post") || n.ends_with(".docs")) {
        let path = tmp.path().join(&name);
        let original = fs::read(&path).unwrap();
        let mut found = 0;
        for _ in 0..200 {
            let mut bad = original.clone();
            let at = rng.gen_range(0..original.len() - 24);
            bad[at] ^= 1 << rng.gen_range(0..8);
            fs::write(&path, &bad).unwrap();
            let index = match Index::open(tmp.path()) {
                Ok(index) => index,
                Err(e) => {
                    assert!(e.to_string().contains(&name), "{name} byte {at}: {e}");
                    found += 1;
                    continue;
                }
            };
            for q in queries {
                let request =
                    needle_engine::SearchRequest { highlight: true, ..needle_engine::SearchRequest::new(q) };
                if let Err(e) = index.searcher().search(&request) {
                    assert!(e.to_string().contains(&name), "{name} byte {at}, {q}: {e}");
                    found += 1;
                }
            }
            for id in ["doc-1", "doc-150", "doc-299", "num"] {
                if let Err(e) = index.searcher().get(id) {
                    assert!(e.to_string().contains(&name), "{name} byte {at}, get {id}: {e}");
                    found += 1;
                }
            }
        }
        assert!(found > 0, "{name}: no query noticed any of 200 damaged copies: the test reads too little");
        fs::write(&path, &original).unwrap();
    }
}

/// A file from another segment put in one's place passes its own footer
/// check; the meta's record of each file's length and checksum catches it.
#[test]
fn a_file_swapped_in_from_another_segment_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    build(tmp.path());
    let files = index_files(tmp.path());
    for ext in [".post", ".terms", ".norms", ".docs"] {
        let mut of_kind = files.iter().filter(|n| n.ends_with(ext));
        let (a, b) = (of_kind.next().unwrap(), of_kind.next().unwrap());
        let original = fs::read(tmp.path().join(a)).unwrap();
        fs::copy(tmp.path().join(b), tmp.path().join(a)).unwrap();
        let err = Index::open(tmp.path()).err().unwrap_or_else(|| panic!("{b} accepted as {a}")).to_string();
        assert!(err.contains(a.as_str()) && err.contains("not this segment's file"), "{err}");
        fs::write(tmp.path().join(a), original).unwrap();
    }
    Index::open(tmp.path()).expect("restored index opens");
}
