//! A stored record: what the document store keeps of one document.
//!
//! ```text
//! Record := Head Source
//! Head   := IdLen:vint Id Version?
//! Version := 0x00 Version:vint SeqNo:vint     (Elasticsearch's `_version` and `_seq_no`)
//! Source := the document's JSON, UTF-8
//! ```
//!
//! The version is 1 when a document is first written, one more at each
//! replacement; the sequence number is the write's, in the index's order of
//! changes. A record without them (written before versions were kept, or by a
//! bulk import, whose documents are all new) is version 1, sequence number 0.
//! A source never starts with a zero byte, so the 0x00's presence is
//! unambiguous. Example: `_id` "a", version 2, sequence number 7, source `{}`
//! is `01 61 00 02 07 7B 7D`. The store keeps the head apart from
//! the compressed source (see the module above), so a hit's `_id` and a
//! document's version are read without decompressing anything.

use needle_core::{Error, Result};

use crate::bytes::{read_vint_lenient, write_vint, ByteReader};

/// A document's version and sequence number (Elasticsearch's `_version` and `_seq_no`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DocVersion {
    pub version: u64,
    /// The write-ahead log's number of the write, counted from 1; 0 for a
    /// document imported without the log.
    pub seq_no: u64,
}

impl DocVersion {
    /// Elasticsearch's `_seq_no`, which counts from 0: the log's number less
    /// one (0 too for an imported document; an import into an index no
    /// logged write has reached takes the log's number 1, so none shares it).
    pub fn shown_seq_no(self) -> u64 {
        shown_seq_no(self.seq_no)
    }
}

/// The `_seq_no` of the write the log numbers `lsn` (0 for none).
pub fn shown_seq_no(lsn: u64) -> u64 {
    lsn.saturating_sub(1)
}

/// A stored record, decoded.
pub struct StoredRecord<'a> {
    pub id: &'a str,
    pub version: DocVersion,
    pub source: &'a str,
}

/// The record of a document with no version yet.
pub fn encode(id: &str, source: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(id.len() + source.len() + 2);
    write_vint(&mut out, id.len() as u64);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(source.as_bytes());
    out
}

/// `record` (made by [`encode`], without a version) with `at` written into it.
pub fn with_version(record: &[u8], at: DocVersion) -> Vec<u8> {
    let split = id_end(record);
    let mut out = Vec::with_capacity(record.len() + 12);
    out.extend_from_slice(&record[..split]);
    out.push(0);
    write_vint(&mut out, at.version);
    write_vint(&mut out, at.seq_no);
    out.extend_from_slice(&record[split..]);
    out
}

/// Where the id ends (the whole record's length when it is cut short).
fn id_end(record: &[u8]) -> usize {
    let mut pos = 0;
    let id_len = read_vint_lenient(record, &mut pos) as usize;
    pos.saturating_add(id_len).min(record.len())
}

/// The length of `record`'s head. Any bytes have one (at most their length),
/// so the store can split what it is given whether or not it is a record.
pub fn head_len(record: &[u8]) -> usize {
    let mut pos = id_end(record);
    if record.get(pos) == Some(&0) {
        pos += 1;
        read_vint_lenient(record, &mut pos);
        read_vint_lenient(record, &mut pos);
    }
    pos.min(record.len())
}

/// A record's parts; `file` names the document store in errors. A head alone
/// decodes too, with an empty source.
pub fn decode<'a>(file: &'a str, record: &'a [u8]) -> Result<StoredRecord<'a>> {
    let mut r = ByteReader::new(file, record);
    let len = r.vint()? as usize;
    let id = r.take(len)?;
    let mut version = DocVersion { version: 1, seq_no: 0 };
    if record.get(r.position()) == Some(&0) {
        r.u8()?;
        version = DocVersion { version: r.vint()?, seq_no: r.vint()? };
    }
    let rest = r.take(r.remaining())?;
    let utf8 = |b| std::str::from_utf8(b).map_err(|_| Error::corrupt(file, "stored document is not UTF-8"));
    Ok(StoredRecord { id: utf8(id)?, version, source: utf8(rest)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_ends_where_the_source_starts() {
        let plain = encode("doc-7", r#"{"a":1}"#);
        assert_eq!(&plain[head_len(&plain)..], br#"{"a":1}"#);
        let versioned = with_version(&plain, DocVersion { version: 300, seq_no: 70_000 });
        assert_eq!(&versioned[head_len(&versioned)..], br#"{"a":1}"#);
        let head = decode("f", &versioned[..head_len(&versioned)]).unwrap();
        assert_eq!(
            (head.id, head.version, head.source),
            ("doc-7", DocVersion { version: 300, seq_no: 70_000 }, "")
        );
        assert_eq!(decode("f", &plain).unwrap().version, DocVersion { version: 1, seq_no: 0 });
    }

    #[test]
    fn example_from_the_docs() {
        let rec = with_version(&encode("a", "{}"), DocVersion { version: 2, seq_no: 7 });
        assert_eq!(rec, [0x01, 0x61, 0x00, 0x02, 0x07, 0x7B, 0x7D]);
        let d = decode("f", &rec).unwrap();
        assert_eq!((d.id, d.version, d.source), ("a", DocVersion { version: 2, seq_no: 7 }, "{}"));
    }

    #[test]
    fn any_bytes_split_within_their_length() {
        for bytes in
            [&[][..], &[0x80], &[5, b'a'], &[1, b'a', 0, 0x80], &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]]
        {
            assert!(head_len(bytes) <= bytes.len(), "{bytes:?}");
        }
    }
}
