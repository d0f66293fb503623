//! The storage backends' conformance suite: every backend, with and without
//! an application cache, returns the file's bytes for any range, keeps the
//! cache within its budget, and reports a read it cannot satisfy as an error
//! naming the file.

use needle_storage::{Backend, Directory, FileSlice, ReadOptions};
use proptest::prelude::*;

const LEN: usize = 5 * 4096 + 123;

fn file_bytes() -> Vec<u8> {
    (0..LEN).map(|i| (i * 7 % 251) as u8).collect()
}

/// A folder holding `f.bin` (`file_bytes`), and the folder with each backend setting.
fn setup() -> (tempfile::TempDir, Vec<(String, Directory)>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    let mut w = dir.create("f.bin").unwrap();
    w.write_all(&file_bytes()).unwrap();
    w.finish().unwrap();
    let mut dirs = Vec::new();
    for backend in Backend::ALL {
        // A mapping is cached by the kernel, not by the application.
        let caches: &[usize] = if backend == Backend::Mmap { &[0] } else { &[0, 3 * 4096, 1 << 20] };
        for &cache in caches {
            let label = format!("{} cache {cache}", backend.name());
            dirs.push((label, dir.clone().with_reads(ReadOptions::new(backend, cache).unwrap())));
        }
    }
    (tmp, dirs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_backend_reads_the_files_bytes(ranges in proptest::collection::vec((0..LEN, 0..3 * 4096usize), 1..20)) {
        let (_tmp, dirs) = setup();
        let want = file_bytes();
        for (label, dir) in &dirs {
            let file = dir.open_read("f.bin").unwrap();
            prop_assert_eq!(file.len(), LEN);
            let sub = file.slice(100..LEN - 50);
            for &(start, len) in &ranges {
                let end = (start + len).min(LEN);
                // Asked for first, in a batch or in the background (direct:
                // sent ahead, the read then waits for it), or not at all.
                match len % 3 {
                    0 => file.will_need(start / 2..end + 4096),
                    1 => file.read_ahead_all(std::slice::from_ref(&(start / 2..end + 4096))),
                    _ => {}
                }
                prop_assert_eq!(&*file.read(start..end).unwrap(), &want[start..end], "{}", label);
                if end <= LEN - 150 {
                    let got = sub.read(start.min(end)..end).unwrap();
                    prop_assert_eq!(&*got, &want[100 + start.min(end)..100 + end], "{} (sub-slice)", label);
                }
                file.will_need(start..end);
            }
        }
    }
}

#[test]
fn a_small_cache_keeps_its_budget_and_counts_hits() {
    let (_tmp, dirs) = setup();
    for (label, dir) in dirs.iter().filter(|(l, _)| l.ends_with("cache 12288")) {
        let file = dir.open_read("f.bin").unwrap();
        for _ in 0..3 {
            for page in 0..6 {
                file.read(page * 4096..page * 4096 + 10).unwrap();
            }
        }
        let stats = dir.reads().cache.as_ref().unwrap().stats();
        assert!(stats.bytes <= stats.budget && stats.evictions > 0, "{label}: {stats:?}");
        file.read(0..10).unwrap();
        file.read(0..10).unwrap();
        let after = dir.reads().cache.as_ref().unwrap().stats();
        assert!(after.hits > stats.hits, "{label}: a page read twice in a row is a hit");
    }
}

#[test]
fn reads_past_the_end_or_of_a_shrunken_file_are_errors_naming_it() {
    let (tmp, dirs) = setup();
    let files: Vec<(String, FileSlice)> =
        dirs.iter().map(|(l, d)| (l.clone(), d.open_read("f.bin").unwrap())).collect();
    for (label, file) in &files {
        let e = file.read(LEN - 10..LEN + 1).unwrap_err().to_string();
        assert!(e.contains("f.bin"), "{label}: {e}");
    }
    // Files are write-once; one cut short behind the engine's back must still fail cleanly.
    std::fs::OpenOptions::new().write(true).open(tmp.path().join("f.bin")).unwrap().set_len(4096).unwrap();
    for (label, file) in &files {
        if file.is_memory() {
            continue; // a mapping would fault (SIGBUS): why index files are never changed in place
        }
        let e = file.read(2 * 4096..2 * 4096 + 100).unwrap_err().to_string();
        assert!(e.contains("f.bin"), "{label}: {e}");
    }
}

#[test]
fn a_read_once_is_not_kept_in_the_cache() {
    let (_tmp, dirs) = setup();
    for (label, dir) in dirs.iter().filter(|(l, _)| l.ends_with("cache 1048576")) {
        let file = dir.open_read("f.bin").unwrap();
        assert_eq!(&*file.read_once(0..LEN).unwrap(), &file_bytes()[..], "{label}");
        let stats = dir.reads().cache.as_ref().unwrap().stats();
        assert_eq!((stats.inserts, stats.misses), (0, 0), "{label}: not kept, not counted");
        file.read(0..LEN).unwrap();
        assert_eq!(dir.reads().cache.as_ref().unwrap().stats().inserts, 6, "{label}: six pages");
    }
}
