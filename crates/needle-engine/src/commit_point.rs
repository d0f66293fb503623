//! An index's last commit point as files to copy elsewhere (a cluster
//! shard's segments kept in an object store): the manifest and every file
//! it names, each held open. A later commit or merge may remove a file once
//! its manifest is replaced; one held open keeps its bytes until it is read,
//! so a copy taken from a commit point is whole even while the index changes.

use std::fs::File;
use std::path::Path;

use needle_core::{Error, Result};
use needle_storage::Directory;

use crate::manifest::{self, Manifest};

/// Times the manifest is read again when a file it names went meanwhile (a commit replaced it).
const TRIES: usize = 8;

/// The files of one commit point, open.
pub struct CommitPoint {
    /// The manifest's generation (one more at each commit).
    pub generation: u64,
    /// Every write up to this log sequence number is in the segments.
    pub checkpoint_lsn: u64,
    /// The manifest file's bytes.
    pub manifest: Vec<u8>,
    /// Every other file it names, by name, open.
    pub files: Vec<(String, File)>,
}

impl CommitPoint {
    /// The commit point of the index in folder `path` now, if its
    /// generation is past `after` (its files are opened only then).
    pub fn open(path: &Path, after: u64) -> Result<Option<CommitPoint>> {
        let dir = Directory::open(path, false)?;
        let mut last = None;
        for _ in 0..TRIES {
            let bytes = dir.read_all(manifest::FILE)?;
            let m = Manifest::decode(&bytes)?;
            if m.generation <= after {
                return Ok(None);
            }
            match open_all(path, &files_of(&m)) {
                Ok(files) => {
                    let (generation, checkpoint_lsn) = (m.generation, m.checkpoint_lsn);
                    return Ok(Some(CommitPoint { generation, checkpoint_lsn, manifest: bytes, files }));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("tried at least once"))
    }
}

/// The files manifest `m` names: each segment's, its deletions and updates.
fn files_of(m: &Manifest) -> Vec<(String, bool)> {
    let mut files = Vec::new();
    for s in &m.segments {
        // A segment without value fields has no `.dv` file.
        let segment = needle_codecs::segment_files(&s.name).map(|f| {
            let optional = f.ends_with(".dv");
            (f, optional)
        });
        files.extend(segment);
        files.extend(s.deletes.iter().chain(&s.updates).map(|f| (f.clone(), false)));
    }
    files
}

/// Opens each of `files` in `path`: (name, whether it may be missing).
fn open_all(path: &Path, files: &[(String, bool)]) -> Result<Vec<(String, File)>> {
    let mut out = Vec::with_capacity(files.len());
    for (name, optional) in files {
        match File::open(path.join(name)) {
            Ok(file) => out.push((name.clone(), file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && *optional => {}
            Err(e) => return Err(Error::io(path.join(name), e)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Index, WriterOptions};

    #[test]
    fn a_commit_point_holds_its_files_while_a_merge_removes_them() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open_or_create(dir.path(), None).unwrap();
        let writer = index.writer(WriterOptions::default()).unwrap();
        for round in 0..2 {
            writer.add(&format!(r#"{{"id": "{round}", "body": "round {round}"}}"#)).unwrap();
            writer.commit().unwrap();
        }
        let point = CommitPoint::open(dir.path(), 0).unwrap().unwrap();
        assert!(CommitPoint::open(dir.path(), point.generation).unwrap().is_none(), "not past its own");
        let names: Vec<&str> = point.files.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.iter().filter(|n| n.ends_with(".post")).count() == 2, "{names:?}");
        assert!(point.checkpoint_lsn >= 2, "{}", point.checkpoint_lsn);
        writer.merge(1).unwrap();
        assert!(!dir.path().join(names[0]).exists(), "the merge removed the first segment's files");
        // The removed files still read whole through the commit point.
        for (name, mut file) in point.files {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes).unwrap();
            assert!(!bytes.is_empty(), "{name}");
        }
        assert!(CommitPoint::open(dir.path(), point.generation).unwrap().is_some(), "the merge's is newer");
    }
}
