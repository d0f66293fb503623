//! The segment store against a real etcd (its pointers) and a folder, then
//! an S3 emulator (the object store): a commit stored and fetched back whole; the pointer moves
//! only forward and only for the newest writer; unnamed files listed;
//! forgetting a shard removes its pointer and files.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use needle_cluster::etcd::Etcd;
use needle_cluster::store::{Commit, SegmentStore, Stored};
use needle_testkit::etcd::EtcdProcess;
use needle_testkit::s3::S3Process;

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

/// Where the objects are, as the test reaches them besides the store.
trait Objects {
    /// The store's location.
    fn location(&self) -> String;
    fn read(&self, key: &str) -> Vec<u8>;
    fn write(&self, key: &str, bytes: &[u8]);
    fn count(&self) -> usize;
}

struct Folder(std::path::PathBuf);

impl Objects for Folder {
    fn location(&self) -> String {
        self.0.to_str().unwrap().to_string()
    }
    fn read(&self, key: &str) -> Vec<u8> {
        std::fs::read(self.0.join(key)).unwrap()
    }
    fn write(&self, key: &str, bytes: &[u8]) {
        std::fs::write(self.0.join(key), bytes).unwrap()
    }
    fn count(&self) -> usize {
        files_under(&self.0)
    }
}

/// Keys under prefix `p/` of the emulator's bucket (the store's keys do not show it).
impl Objects for S3Process {
    fn location(&self) -> String {
        self.url("p")
    }
    fn read(&self, key: &str) -> Vec<u8> {
        self.get(&format!("p/{key}"))
    }
    fn write(&self, key: &str, bytes: &[u8]) {
        self.put(&format!("p/{key}"), bytes)
    }
    fn count(&self) -> usize {
        self.keys().len()
    }
}

#[test]
fn commits_move_the_pointer_forward_for_the_newest_writer_only() {
    let Some(etcd) = EtcdProcess::start("store test") else { return };
    let dir = tempfile::tempdir().unwrap();
    commits_stored_in(&etcd, &Folder(dir.path().join("store")), dir.path());
}

#[test]
fn commits_stored_in_s3_likewise() {
    let Some(etcd) = EtcdProcess::start("S3 store test") else { return };
    let Some(s3) = S3Process::start("S3 store test", "needle") else { return };
    // Read by the S3 client as it is built (only this test of the binary builds one).
    for (name, value) in s3.env() {
        std::env::set_var(name, value);
    }
    let dir = tempfile::tempdir().unwrap();
    commits_stored_in(&etcd, &s3, dir.path());

    // A bucket that is not there is named when the store is tried.
    let etcd = Etcd::new(std::slice::from_ref(&etcd.url)).unwrap();
    let missing = SegmentStore::open("s3://no-such-bucket/p", etcd, "c").unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let refused = runtime.block_on(missing.check()).unwrap_err().to_string();
    assert!(refused.contains("s3://no-such-bucket/p") && refused.contains("NoSuchBucket"), "{refused}");
}

fn commits_stored_in(etcd: &EtcdProcess, objects: &dyn Objects, dir: &Path) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let local = dir.join("local");
    std::fs::create_dir_all(&local).unwrap();
    let store =
        SegmentStore::open(&objects.location(), Etcd::new(std::slice::from_ref(&etcd.url)).unwrap(), "c")
            .unwrap();
    runtime.block_on(store.check()).unwrap();
    let put_in = |shard, term, commit, sent: &mut BTreeMap<String, String>| {
        runtime.block_on(store.put(shard, term, commit, sent)).unwrap()
    };
    let put = |term, commit, sent: &mut BTreeMap<String, String>| put_in("s.shard-0", term, commit, sent);
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
    let fetched = dir.join("fetched");
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
    let snapshot = pointer.unwrap().key;
    let text = String::from_utf8(objects.read(&snapshot)).unwrap().replace("25", "26");
    objects.write(&snapshot, text.as_bytes());
    let damaged = runtime.block_on(store.fetch("s.shard-0", &dir.join("again"))).unwrap_err();
    assert!(damaged.to_string().contains("damaged"), "{damaged}");

    // A file larger than a part (8 MB) goes in parts and comes back whole.
    let large: String = (0..2_500_000u32).map(|i| format!("{:08}", i.wrapping_mul(2_654_435_761))).collect();
    let commit_large = commit(&local, 1, 5, &[("seg_000000.pos", &large)]);
    assert!(matches!(put_in("s.shard-1", 3, commit_large, &mut BTreeMap::new()), Stored::Moved(_)));
    let fetched = dir.join("fetched-large");
    runtime.block_on(store.fetch("s.shard-1", &fetched)).unwrap().unwrap();
    assert!(std::fs::read_to_string(fetched.join("seg_000000.pos")).unwrap() == large, "fetched whole");

    for shard in ["s.shard-0", "s.shard-1"] {
        runtime.block_on(store.forget(shard)).unwrap();
        assert_eq!(runtime.block_on(store.pointer(shard)).unwrap(), (None, 0));
    }
    assert_eq!(objects.count(), 0);
}

fn files_under(dir: &Path) -> usize {
    let entries: Vec<std::path::PathBuf> =
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    entries.iter().map(|p| if p.is_dir() { files_under(p) } else { 1 }).sum()
}
