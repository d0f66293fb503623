//! Reading the log back, strictly (see the module above for the rules).

use std::time::{Duration, Instant};

use needle_core::{Error, Result};
use needle_storage::Directory;

use super::{decode, start_of, Record, HEADER_LEN, MAGIC, VERSION};

/// What replay does on damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDamage {
    /// Report it as [`Error::Corrupt`], naming the file, where, and what would be lost.
    Fail,
    /// Replay what comes before it and drop the rest (recovery asked to truncate the log).
    Truncate,
}

/// What a replay read.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    /// Records applied (those after the checkpoint).
    pub records: u64,
    /// The sequence number the next change gets.
    pub next_lsn: u64,
    /// The newest file and the length of its intact part, when it ends in a
    /// torn record (written when the process died; never acknowledged).
    pub torn: Option<(String, u64)>,
    /// With [`OnDamage::Truncate`]: the damage found and what was dropped.
    pub dropped: Option<String>,
    pub elapsed: Duration,
}

/// The log files in `dir`: (start sequence number, name), ascending.
fn log_files(dir: &Directory) -> Result<Vec<(u64, String)>> {
    let mut files: Vec<(u64, String)> =
        dir.list()?.into_iter().filter_map(|n| Some((start_of(&n)?, n))).collect();
    files.sort();
    Ok(files)
}

/// Calls `apply` for every record after `checkpoint`, in order. Damage is
/// handled as `on_damage` says; a torn record at the end of the newest file
/// is not damage.
pub fn replay(
    dir: &Directory,
    checkpoint: u64,
    on_damage: OnDamage,
    apply: &mut dyn FnMut(u64, Record) -> Result<()>,
) -> Result<Replayed> {
    let started = Instant::now();
    let files = log_files(dir)?;
    // Files whose successor starts at or before the first record needed are wholly covered.
    let first = (0..files.len()).find(|&i| files.get(i + 1).is_none_or(|n| n.0 > checkpoint + 1));
    let mut reader = Reader { dir, files: &files, expected: checkpoint + 1, out: Replayed::default() };
    for i in first.into_iter().flat_map(|f| f..files.len()) {
        if let Err(damage) = reader.file(i, apply)? {
            match on_damage {
                OnDamage::Fail => {
                    return Err(Error::corrupt_at(damage.file, damage.offset, damage.what));
                }
                OnDamage::Truncate => {
                    reader.out.dropped =
                        Some(format!("{} at byte {}: {}", damage.file, damage.offset, damage.what));
                    break;
                }
            }
        }
    }
    let mut out = reader.out;
    out.next_lsn = reader.expected;
    out.elapsed = started.elapsed();
    Ok(out)
}

/// Damage found in a file: where, and what it means.
struct Damage {
    file: String,
    offset: u64,
    what: String,
}

struct Reader<'a> {
    dir: &'a Directory,
    files: &'a [(u64, String)],
    /// The next sequence number the chain must hold.
    expected: u64,
    out: Replayed,
}

impl Reader<'_> {
    /// Replays file `i`; `Ok(Err(damage))` when it is damaged.
    fn file(
        &mut self,
        i: usize,
        apply: &mut dyn FnMut(u64, Record) -> Result<()>,
    ) -> Result<Result<(), Damage>> {
        let (start, name) = &self.files[i];
        let newest = i + 1 == self.files.len();
        let bytes = self.dir.read_all(name)?;
        let damage = |offset: usize, what: String| Damage { file: name.clone(), offset: offset as u64, what };
        let version = bytes.get(4..8).map_or(0, |v| u32::from_le_bytes(v.try_into().expect("4 bytes")));
        if bytes.starts_with(MAGIC) && version > VERSION {
            let reason = format!("log version {version}; this build reads 1..={VERSION}");
            return Err(Error::Format { file: name.clone(), reason });
        }
        if let Err(what) = self.check_header(&bytes, *start, name) {
            // A crash while the newest file was being created leaves it short or zeroed.
            let never_written = bytes.len() < HEADER_LEN || bytes[..HEADER_LEN].iter().all(|&b| b == 0);
            if newest && never_written {
                self.out.torn = Some((name.clone(), 0));
                return Ok(Ok(()));
            }
            return Ok(Err(damage(0, self.losing(what, i, None))));
        }
        if *start > self.expected {
            let what = format!(
                "records {}..={} are missing (the file before it ends early or is gone)",
                self.expected,
                start - 1
            );
            return Ok(Err(damage(0, self.losing(what, i, None))));
        }
        let mut pos = HEADER_LEN;
        let mut next = *start;
        while pos < bytes.len() {
            match decode(&bytes, pos, |lsn| lsn == next) {
                Some((lsn, record, end)) => {
                    if lsn >= self.expected {
                        apply(lsn, record)?;
                        self.out.records += 1;
                        self.expected = lsn + 1;
                    }
                    next = lsn + 1;
                    pos = end;
                }
                None if newest && intact_after(&bytes, pos, next).is_none() => {
                    self.out.torn = Some((name.clone(), pos as u64));
                    break;
                }
                None => {
                    let what = format!("record {next} is damaged (bad length, checksum or sequence number)");
                    return Ok(Err(damage(pos, self.losing(what, i, Some((&bytes, pos, next))))));
                }
            }
        }
        if let Some((following, _)) = self.files.get(i + 1) {
            if *following < next {
                let what = format!(
                    "the next file starts at record {following}, inside this one (which ends at {})",
                    next - 1
                );
                return Ok(Err(damage(bytes.len(), what)));
            }
        }
        Ok(Ok(()))
    }

    fn check_header(&self, bytes: &[u8], start: u64, name: &str) -> Result<(), String> {
        if bytes.len() < HEADER_LEN || &bytes[..4] != MAGIC {
            return Err(format!(
                "bad header (magic {}, {} bytes)",
                needle_core::printable_bytes(&bytes[..bytes.len().min(4)]),
                bytes.len()
            ));
        }
        if bytes[4..8] == [0; 4] {
            return Err("bad header (version 0)".into());
        }
        let in_header = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
        if in_header != start {
            return Err(format!(
                "header says the file starts at record {in_header}, its name {name} says {start}"
            ));
        }
        Ok(())
    }

    /// `what`, followed by what replay would lose by stopping there: the intact
    /// records after the damage in file `i` (when `at` gives its bytes, the
    /// damage's position and the record expected there) and in later files.
    fn losing(&self, what: String, i: usize, at: Option<(&[u8], usize, u64)>) -> String {
        let (mut count, mut first, mut last) = (0u64, None, 0u64);
        let mut tally = |lsn: u64| {
            count += 1;
            first.get_or_insert(lsn);
            last = lsn;
        };
        if let Some((bytes, pos, next)) = at {
            let mut at = intact_after(bytes, pos, next);
            while let Some((lsn, end)) = at {
                tally(lsn);
                at = decode(bytes, end, |l| l == lsn + 1).map(|(l, _, e)| (l, e));
            }
        }
        for (_, name) in &self.files[i + 1..] {
            let Ok(bytes) = self.dir.read_all(name) else { continue };
            let mut pos = HEADER_LEN;
            while let Some((lsn, _, end)) = decode(&bytes, pos, |_| true) {
                tally(lsn);
                pos = end;
            }
        }
        let applied = self.out.records;
        match first {
            None => format!("{what}; {applied} records before it replay, none after it"),
            Some(first) => format!(
                "{what}; {applied} records before it replay, {count} intact records after it \
                 (sequence numbers {first}..={last}) cannot be replayed in order and would be lost \
                 by truncating the log"
            ),
        }
    }
}

/// The first intact record past `pos` whose sequence number is at least
/// `next` (the one damaged or missing there): (its lsn, its end).
fn intact_after(bytes: &[u8], pos: usize, next: u64) -> Option<(u64, usize)> {
    let plausible = |lsn: u64| lsn >= next && lsn - next < 1 << 32;
    (pos + 1..bytes.len()).find_map(|p| decode(bytes, p, plausible).map(|(lsn, _, end)| (lsn, end)))
}

/// Deletes the log files whose every record is at most `lsn` (a commit holds them).
pub fn remove_through(dir: &Directory, lsn: u64) -> Result<()> {
    let files = log_files(dir)?;
    for pair in files.windows(2) {
        if pair[1].0 <= lsn + 1 {
            dir.delete(&pair[0].1)?;
        }
    }
    Ok(())
}

/// Deletes every log file (after a commit that holds all that can be replayed).
pub fn remove_all(dir: &Directory) -> Result<()> {
    log_files(dir)?.iter().try_for_each(|(_, name)| dir.delete(name))
}

#[cfg(test)]
mod tests {
    use super::super::{file_name, Wal};
    use super::*;

    /// A log of `n` adds from record 1, rotated every `per_file` records; returns its files.
    fn write_log(dir: &Directory, n: u64, per_file: u64) -> Vec<String> {
        let wal = Wal::create(dir, 1).unwrap();
        for lsn in 1..=n {
            wal.append(lsn, &Record::Add { id: Some(lsn.to_string()), json: "{}".into() });
            if lsn % per_file == 0 && lsn < n {
                wal.rotate(lsn + 1).unwrap();
            }
        }
        wal.sync_to(n).unwrap();
        log_files(dir).unwrap().into_iter().map(|(_, name)| name).collect()
    }

    fn read(dir: &Directory, checkpoint: u64, on_damage: OnDamage) -> Result<(Vec<u64>, Replayed)> {
        let mut seen = Vec::new();
        let out = replay(dir, checkpoint, on_damage, &mut |lsn, _| {
            seen.push(lsn);
            Ok(())
        })?;
        Ok((seen, out))
    }

    fn edit(dir: &Directory, name: &str, f: impl FnOnce(&mut Vec<u8>)) {
        let mut bytes = dir.read_all(name).unwrap();
        f(&mut bytes);
        std::fs::write(dir.file_path(name), bytes).unwrap();
    }

    fn setup(n: u64, per_file: u64) -> (tempfile::TempDir, Directory, Vec<String>) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Directory::open(tmp.path(), true).unwrap();
        let files = write_log(&dir, n, per_file);
        (tmp, dir, files)
    }

    #[test]
    fn records_after_the_checkpoint_replay_in_order_and_a_torn_tail_is_not_damage() {
        let (_tmp, dir, files) = setup(30, 10);
        assert_eq!(files.len(), 3);
        let (seen, out) = read(&dir, 12, OnDamage::Fail).unwrap();
        assert_eq!(seen, (13..=30).collect::<Vec<_>>());
        assert_eq!((out.records, out.next_lsn, out.torn.clone()), (18, 31, None));
        let intact = dir.read_all(&files[2]).unwrap().len() as u64;
        edit(&dir, &files[2], |b| b.extend_from_slice(&[40, 0, 0, 0, 1, 2, 3]));
        let (seen, out) = read(&dir, 0, OnDamage::Fail).unwrap();
        assert_eq!(seen.len(), 30);
        assert_eq!(out.torn, Some((files[2].clone(), intact)));
        remove_through(&dir, 20).unwrap();
        assert_eq!(log_files(&dir).unwrap().len(), 1);
    }

    #[test]
    fn one_zeroed_byte_mid_file_is_corruption_that_names_what_is_lost() {
        let (_tmp, dir, files) = setup(30, 100);
        let bytes = dir.read_all(&files[0]).unwrap();
        // Every byte of every record but the last: the record after it is intact.
        let last_start =
            (HEADER_LEN..bytes.len()).rev().find(|&p| decode(&bytes, p, |l| l == 30).is_some()).unwrap();
        for at in HEADER_LEN..last_start {
            if bytes[at] == 0 {
                continue;
            }
            edit(&dir, &files[0], |b| b[at] = 0);
            let err = read(&dir, 0, OnDamage::Fail).unwrap_err();
            let Error::Corrupt { file, offset: Some(_), what } = &err else { panic!("byte {at}: {err}") };
            assert_eq!(file, &files[0]);
            assert!(what.contains("intact records after it"), "byte {at}: {what}");
            edit(&dir, &files[0], |b| b[at] = bytes[at]);
        }
        edit(&dir, &files[0], |b| b[HEADER_LEN + 20] ^= 0xFF);
        let (seen, out) = read(&dir, 0, OnDamage::Truncate).unwrap();
        assert_eq!(seen, Vec::<u64>::new(), "the first record is the damaged one");
        assert!(out.dropped.unwrap().contains("29 intact records after it"));
        assert_eq!(out.next_lsn, 1);
    }

    #[test]
    fn a_file_that_is_not_the_newest_cut_emptied_deleted_or_with_a_bad_magic_is_corruption() {
        type Damage = fn(&Directory, &str);
        let cases: [(&str, Damage); 4] = [
            ("truncated", |d, f| edit(d, f, |b| b.truncate(b.len() - 5))),
            ("emptied", |d, f| edit(d, f, |b| b.truncate(HEADER_LEN))),
            ("deleted", |d, f| d.delete(f).unwrap()),
            ("bad magic", |d, f| edit(d, f, |b| b[0] = b'X')),
        ];
        for (case, damage) in cases {
            let (_tmp, dir, files) = setup(30, 10);
            damage(&dir, &files[1]);
            let err = read(&dir, 0, OnDamage::Fail).unwrap_err();
            assert!(matches!(err, Error::Corrupt { .. }), "{case}: {err}");
            let (seen, out) = read(&dir, 0, OnDamage::Truncate).unwrap();
            assert!(seen.len() >= 10 && seen.len() < 20, "{case}: {} replayed", seen.len());
            assert!(out.dropped.is_some(), "{case}");
        }
    }

    #[test]
    fn a_gap_after_the_checkpoint_is_corruption_and_covered_files_are_not_read() {
        let (_tmp, dir, files) = setup(30, 10);
        dir.delete(&files[0]).unwrap();
        assert!(read(&dir, 0, OnDamage::Fail).is_err(), "records 1..=10 are needed and gone");
        let (seen, _) = read(&dir, 10, OnDamage::Fail).unwrap();
        assert_eq!(seen.len(), 20, "nothing before the checkpoint is needed");
        edit(&dir, &files[1], |b| b[3] = 0);
        assert!(read(&dir, 20, OnDamage::Fail).is_ok(), "a covered file is not read");
    }

    #[test]
    fn a_newest_file_created_but_never_written_is_a_torn_tail() {
        let (_tmp, dir, _) = setup(10, 100);
        std::fs::write(dir.file_path(&file_name(11)), [0u8; 7]).unwrap();
        let (seen, out) = read(&dir, 0, OnDamage::Fail).unwrap();
        assert_eq!((seen.len(), out.next_lsn), (10, 11));
        assert_eq!(out.torn, Some((file_name(11), 0)));
    }
}
