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
    assert!(files.len() >= 11, "two segments of five files and a manifest: {files:?}");
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
