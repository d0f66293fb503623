//! The segment store against a real etcd (its pointers) and a folder (the
//! object store): a commit stored and fetched back whole; the pointer moves
//! only forward and only for the newest writer; unnamed files listed;
//! forgetting a shard removes its pointer and files.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use needle_cluster::etcd::Etcd;
use needle_cluster::store::{Commit, SegmentStore, Stored};
use needle_testkit::etcd::EtcdProcess;

/// A commit of generation `generation` covering writes to `lsn`, its files made in `dir`.
fn commit(dir: &Path, generation: u64, lsn: u64, files: &[(&str, &str)]) -> Commit {
    let files = files
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
            (name.to_string(), std::fs::File::open(&path).unwrap())
        })
        .collect();
    Commit { generation, checkpoint_lsn: lsn, manifest: format!("manifest {generation}").into_bytes(), files }
}

fn generation(stored: &Stored) -> (bool, u64) {
    match stored {
        Stored::Moved(p) => (true, p.generation),
        Stored::Stale(p) => (false, p.generation),
    }
}

#[test]
fn commits_move_the_pointer_forward_for_the_newest_writer_only() {
    let Some(etcd) = EtcdProcess::start("store test") else { return };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (local, folder) = (dir.path().join("local"), dir.path().join("store"));
    std::fs::create_dir_all(&local).unwrap();
    let store = SegmentStore::open(
        folder.to_str().unwrap(),
        Etcd::new(std::slice::from_ref(&etcd.url)).unwrap(),
        "c",
    )
    .unwrap();
    let put = |term, commit, sent: &mut BTreeMap<String, String>| {
        runtime.block_on(store.put("s.shard-0", term, commit, sent)).unwrap()
    };
    let mut sent = BTreeMap::new();

    let first = commit(&local, 2, 10, &[("seg_000000.post", "a"), ("seg_000000.meta", "b")]);
    assert_eq!(generation(&put(7, first, &mut sent)), (true, 2));
    // The next commit keeps one file: only the new one is sent.
    let second = commit(&local, 3, 20, &[("seg_000000.post", "a"), ("seg_000001.post", "c")]);
    assert_eq!(generation(&put(7, second, &mut sent)), (true, 3));
    assert_eq!(sent.keys().collect::<Vec<_>>(), ["seg_000000.post", "seg_000001.post"], "{sent:?}");
    // Older than what the pointer names, or from an older writer: left alone.
    assert_eq!(generation(&put(7, commit(&local, 2, 10, &[]), &mut sent)), (false, 3));
    assert_eq!(generation(&put(6, commit(&local, 9, 30, &[]), &mut BTreeMap::new())), (false, 3));
    assert_eq!(generation(&put(9, commit(&local, 1, 15, &[]), &mut BTreeMap::new())), (false, 3));

    // Fetched back whole: the files the pointer's commit names, its manifest.
    let fetched = dir.path().join("fetched");
    let pointer = runtime.block_on(store.fetch("s.shard-0", &fetched)).unwrap().unwrap();
    assert_eq!((pointer.generation, pointer.lsn, pointer.term), (3, 20, 7));
    let read = |name: &str| std::fs::read_to_string(fetched.join(name)).unwrap();
    assert_eq!(
        (read("seg_000000.post"), read("seg_000001.post"), read("needle.manifest")),
        ("a".into(), "c".into(), "manifest 3".into())
    );
    assert!(!fetched.join("seg_000000.meta").exists(), "not in the commit fetched");

    // A newer writer's commit: its files under its term; the older ones unnamed.
    let newer = commit(&local, 1, 25, &[("seg_000000.post", "d")]);
    assert!(matches!(put(8, newer, &mut BTreeMap::new()), Stored::Moved(_)));
    let (pointer, _) = runtime.block_on(store.pointer("s.shard-0")).unwrap();
    let unnamed = runtime.block_on(store.unnamed("s.shard-0", &pointer.unwrap())).unwrap();
    assert!(unnamed.iter().all(|k| k.starts_with("c/s.shard-0/7/")), "{unnamed:?}");
    assert_eq!(unnamed.len(), 7, "term 7's three files, two manifests and two snapshots: {unnamed:?}");

    // A damaged snapshot is refused, naming it.
    let (pointer, _) = runtime.block_on(store.pointer("s.shard-0")).unwrap();
    let snapshot = folder.join(pointer.unwrap().key);
    let text = std::fs::read_to_string(&snapshot).unwrap().replace("25", "26");
    std::fs::write(&snapshot, text).unwrap();
    let damaged = runtime.block_on(store.fetch("s.shard-0", &dir.path().join("again"))).unwrap_err();
    assert!(damaged.to_string().contains("damaged"), "{damaged}");

    runtime.block_on(store.forget("s.shard-0")).unwrap();
    assert_eq!(runtime.block_on(store.pointer("s.shard-0")).unwrap(), (None, 0));
    assert_eq!(files_under(&folder), 0);
}

fn files_under(dir: &Path) -> usize {
    let entries: Vec<std::path::PathBuf> =
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    entries.iter().map(|p| if p.is_dir() { files_under(p) } else { 1 }).sum()
}
