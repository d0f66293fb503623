//! The write-ahead log: every change, in sequence-number order, so a crash
//! loses nothing that was acknowledged in `durable` mode.
//!
//! ```text
//! wal-<StartLsn:020>.log := Header Record*
//! Header := Magic "NDLW" Version:u32 StartLsn:u64                      (16 bytes)
//! Record := Len:u32 Crc32:u32 Lsn:u64 Kind:u8 Payload[Len - 9]
//! ```
//!
//! `Crc32` covers `Lsn Kind Payload`. `Kind` 3 = add or replace (payload:
//! `IdLen:vint Id Json`, the document's `_id` and its JSON line, so a
//! generated id replays as the same id), 2 = delete (payload: the `_id`),
//! 4 = in-place update of numeric fields (payload: `IdLen:vint Id Json`, the
//! `_id` and a JSON object of the fields' new values), 5 = a write the ingest
//! log never held (no payload: the sequence number is taken, nothing changes;
//! see `IndexWriter::skip_logged`); version 1 files may hold kind 1 = add
//! (payload: the JSON line alone).
//! Integers are little-endian. Example: deleting `_id` "a" as record 7 is
//! `0A 00 00 00 | crc | 07 00 00 00 00 00 00 00 | 02 | 61`.
//!
//! The files form one chain: a file's records are numbered consecutively from
//! its `StartLsn` (which its name repeats), and each file starts where the one
//! before it ended. A commit covers every record up to its checkpoint, after
//! which the files it covers are deleted. Replay is strict ([`replay`]):
//! only the newest file may end in a torn record (the one being written when
//! the process died, never acknowledged); a bad record anywhere else, a bad
//! header, or a gap in the sequence numbers is corruption, reported with what
//! it would lose, and accepted only when recovery is asked to truncate the log.
//!
//! Group commit ([`Wal`]): appends go to a buffer; the first writer that needs
//! its record durable writes and fsyncs the whole buffer for everyone waiting.

mod replay;
mod writer;

use needle_codecs::bytes::{write_vint, ByteReader};

pub use replay::{remove_all, remove_through, replay, OnDamage, Replayed};
pub use writer::Wal;

const MAGIC: &[u8; 4] = b"NDLW";
/// Version 2 added record kind 3, version 3 kind 4, version 4 kind 5; older files are still read.
const VERSION: u32 = 4;
const HEADER_LEN: usize = 16;
/// Bytes of a record before its payload: length, checksum, sequence number, kind.
const RECORD_HEAD: usize = 17;
/// The largest record replay believes in (a document of at most this size):
/// a damaged length field must not send the scan for intact records far away.
const MAX_RECORD: usize = 256 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A document's `_id` (absent in version 1 records: the JSON has it, or
    /// it was generated) and JSON line.
    Add {
        id: Option<String>,
        json: String,
    },
    Delete(String),
    /// An in-place update: `_id`, and a JSON object of the fields' new values.
    Update {
        id: String,
        values: String,
    },
    /// A write the ingest log never held (its node failed first; it was
    /// never acknowledged): its sequence number is taken, and nothing changes.
    Skip,
}

impl Record {
    pub(crate) fn kind(&self) -> u8 {
        match self {
            Record::Add { id: Some(_), .. } => 3,
            Record::Add { id: None, .. } => 1,
            Record::Delete(_) => 2,
            Record::Update { .. } => 4,
            Record::Skip => 5,
        }
    }

    pub(crate) fn payload(&self, out: &mut Vec<u8>) {
        match self {
            Record::Add { id: None, json } => out.extend_from_slice(json.as_bytes()),
            Record::Delete(id) => out.extend_from_slice(id.as_bytes()),
            Record::Skip => {}
            Record::Update { id, values: json } | Record::Add { id: Some(id), json } => {
                write_vint(out, id.len() as u64);
                out.extend_from_slice(id.as_bytes());
                out.extend_from_slice(json.as_bytes());
            }
        }
    }

    pub(crate) fn decode(kind: u8, payload: &[u8]) -> Option<Record> {
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).ok();
        match kind {
            1 => Some(Record::Add { id: None, json: text(payload)? }),
            2 => Some(Record::Delete(text(payload)?)),
            5 if payload.is_empty() => Some(Record::Skip),
            3 | 4 => {
                let mut r = ByteReader::new("", payload);
                let len = usize::try_from(r.vint().ok()?).ok()?;
                let id = text(r.take(len).ok()?)?;
                let json = text(r.take(r.remaining()).ok()?)?;
                Some(match kind {
                    3 => Record::Add { id: Some(id), json },
                    _ => Record::Update { id, values: json },
                })
            }
            _ => None,
        }
    }
}

pub(crate) fn file_name(start_lsn: u64) -> String {
    format!("wal-{start_lsn:020}.log")
}

/// The start sequence number a log file's name gives, or `None` for other files.
fn start_of(name: &str) -> Option<u64> {
    name.strip_prefix("wal-")?.strip_suffix(".log")?.parse().ok()
}

fn header(start_lsn: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&start_lsn.to_le_bytes());
    out
}

/// Appends record `lsn` to `out`.
fn encode(lsn: u64, record: &Record, out: &mut Vec<u8>) {
    let mut body = Vec::with_capacity(64);
    body.extend_from_slice(&lsn.to_le_bytes());
    body.push(record.kind());
    record.payload(&mut body);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    out.extend_from_slice(&body);
}

/// The intact record at `pos` whose sequence number `plausible` accepts:
/// (lsn, record, end). The sequence number and kind are checked before the
/// checksum, so scanning damaged bytes for the next record stays cheap.
fn decode(bytes: &[u8], pos: usize, plausible: impl Fn(u64) -> bool) -> Option<(u64, Record, usize)> {
    let head = bytes.get(pos..pos + RECORD_HEAD)?;
    let len = u32::from_le_bytes(head[0..4].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(head[4..8].try_into().ok()?);
    let lsn = u64::from_le_bytes(head[8..16].try_into().ok()?);
    if !(9..=MAX_RECORD).contains(&len) || !plausible(lsn) || !matches!(head[16], 1..=5) {
        return None;
    }
    let body = bytes.get(pos + 8..pos + 8 + len)?;
    if crc32fast::hash(body) != crc {
        return None;
    }
    Some((lsn, Record::decode(body[8], &body[9..])?, pos + 8 + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_from_the_docs() {
        let mut out = Vec::new();
        encode(7, &Record::Delete("a".into()), &mut out);
        assert_eq!(&out[..4], &[0x0A, 0, 0, 0]);
        assert_eq!(&out[8..], &[7, 0, 0, 0, 0, 0, 0, 0, 2, b'a']);
        assert_eq!(decode(&out, 0, |_| true), Some((7, Record::Delete("a".into()), out.len())));
        assert_eq!(decode(&out, 0, |lsn| lsn != 7), None, "an implausible sequence number is no record");
        assert_eq!(start_of(&file_name(42)), Some(42));
        let add = Record::Add { id: Some("x".into()), json: "{}".into() };
        let mut out = Vec::new();
        encode(8, &add, &mut out);
        assert_eq!(&out[16..], &[3, 1, b'x', b'{', b'}']);
        assert_eq!(decode(&out, 0, |_| true).map(|r| r.1), Some(add));
        assert_eq!(start_of("wal-x.log"), None);
        let update = Record::Update { id: "x".into(), values: "{}".into() };
        let mut out = Vec::new();
        encode(9, &update, &mut out);
        assert_eq!(&out[16..], &[4, 1, b'x', b'{', b'}']);
        assert_eq!(decode(&out, 0, |_| true).map(|r| r.1), Some(update));
    }
}
