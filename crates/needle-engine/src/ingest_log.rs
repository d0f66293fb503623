//! A log outside the index that every write reaches before it is
//! acknowledged: in a cluster, the shard's stream in NATS JetStream, which
//! keeps a write once a quorum of its servers has it (issue 19). The index
//! hands each write to it in sequence-number order, as the write-ahead log
//! gets it, and a caller waiting for a write to be durable waits for the
//! log's acknowledgement too. A copy of the index that lost writes (a node
//! restarted without its disk's latest state) takes them back from the log
//! with [`crate::IndexWriter::apply_logged`], in order.
//!
//! A write travels as the write-ahead log's record (`wal`'s `Kind Payload`,
//! see [`encode`]): the document's JSON with its `_id`, a deletion, or an
//! in-place update; replaying the same records in the same order gives the
//! same documents with the same versions.

use needle_core::{Error, Result};

pub use crate::wal::Record;

/// Where an index's writes are logged beyond its own disk.
pub trait IngestLog: Send + Sync {
    /// Takes write `lsn` (called under the index's write lock, so in order,
    /// one after another); it must not block.
    fn append(&self, lsn: u64, record: Vec<u8>);

    /// Returns once the log holds every write up to `lsn`, or why it cannot.
    fn wait(&self, lsn: u64) -> Result<()>;

    /// Whether a write may be taken now: a log known to fail refuses it
    /// before it changes anything.
    fn check(&self) -> Result<()>;
}

/// A write as the log carries it: its kind, then its payload.
pub fn encode(record: &Record) -> Vec<u8> {
    let mut out = vec![record.kind()];
    record.payload(&mut out);
    out
}

/// A write the log carried, or why it is not one.
pub fn decode(bytes: &[u8]) -> Result<Record> {
    let (&kind, payload) = bytes.split_first().ok_or_else(|| Error::invalid("an empty log record"))?;
    Record::decode(kind, payload)
        .ok_or_else(|| Error::invalid(format!("a log record of unknown kind {kind}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damaged_ones_are_refused() {
        let records = [
            Record::Add { id: Some("a/1".into()), json: r#"{"t":"x"}"#.into() },
            Record::Delete("é".into()),
            Record::Update { id: "7".into(), values: r#"{"n":3}"#.into() },
        ];
        for record in records {
            assert_eq!(decode(&encode(&record)).unwrap(), record);
        }
        assert!(decode(&[]).is_err());
        assert!(decode(&[9, 1, 2]).is_err());
        assert!(decode(&[2, 0xff, 0xfe]).is_err(), "a deletion's id must be UTF-8");
    }
}
