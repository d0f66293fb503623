//! The ingest log in NATS JetStream: each shard of a cluster index has a
//! stream of its own, named `NEEDLE_{cluster}_{shard}` (the names hex-coded:
//! a stream name allows no dots) over the one subject
//! `needle.{cluster}.{shard}`, stored in files and replicated on up to three
//! of the NATS servers. The shard's node publishes its writes there in
//! order, several to a message; JetStream answers a publish once a quorum of
//! the stream's replicas holds it, and the node acknowledges the writes only
//! then. A node that lost writes (restarted without its disk's latest state)
//! reads them back from the stream, and a replica follows the stream as it
//! grows ([`Tail`]).
//!
//! One writer at a time: a node taking a stream over (at its start, or when
//! the cluster moves the shard to it) reads it to its end and publishes a
//! writer's mark that JetStream takes only if the stream still ends where
//! the reading did; every later message names the stream sequence it must
//! follow (`Nats-Expected-Last-Sequence`). A writer a newer one took over
//! from (a node paused past its lease, then resumed) has its next publish
//! refused, finds the newer writer's mark after its own messages, and stops
//! ([`ShardStream::landed_after`]): it never acknowledges a write the
//! stream's reader would not keep.
//!
//! A message (format 2; integers little-endian):
//!
//! ```text
//! Message := Version:u8 Crc32:u32 Entry+          Crc32 of the entries
//! Entry   := Lsn:u64 Part:u8 Len:u32 Record[Len]
//! ```
//!
//! `Lsn` is the write's sequence number (`_seq_no` + 1), ascending within a
//! message; `Record` the engine's log record (`needle_engine::ingest_log`).
//! `Part` 0 is a whole record; a record larger than [`MESSAGE_BYTES`] is cut
//! into pieces, one a message: 1 its first, 2 a middle one, 3 its last.
//! `Part` 4 (format 2, `Len` 0) is a writer's mark (see [`mark`]): a writer
//! takes the stream over, its copy having every write up to `Lsn`. When
//! `Lsn` is past the stream's newest write, the writes between were taken by
//! a node that failed before it logged them (so none was acknowledged): a
//! gap, whose numbers a copy filled from the stream takes as writes that
//! change nothing. Format 1 (no marks) is still read.
//! Example: write 7, record `02 61` (delete "a"), alone in a message:
//! `02 | crc | 07 00 00 00 00 00 00 00 | 00 | 02 00 00 00 | 02 61`.
//! A publish that failed is sent again, regrouped, with the writes after
//! it: a stream may hold a write twice, and a reader keeps its first copy.
//!
//! Once a shard's commit is stored (`crate::store`), the messages whose
//! writes it holds are trimmed from the stream ([`ShardStream::trim_before`]):
//! a stream may then begin with the later pieces of a record a stored commit holds.

use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use bytes::Bytes;
use futures_util::StreamExt;

const VERSION: u8 = 2;
const MARK: u8 = 4;
/// The most record bytes a message holds (NATS refuses payloads over 1 MB by default).
pub const MESSAGE_BYTES: usize = 512 << 10;
const HEAD: usize = 5;
const ENTRY_HEAD: usize = 13;
/// How often the connection to a NATS server is checked.
const PING_EVERY: Duration = Duration::from_secs(1);
/// How long a publish waits for JetStream's answer.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a read of a stream waits for its next message, when the stream
/// holds more: past it the read fails (and is tried again) rather than wait
/// on a consumer that delivers nothing.
const STALL: Duration = Duration::from_secs(10);

/// Why the ingest log failed, as its client or server said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError(pub String);

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the ingest log (NATS JetStream): {}", self.0)
    }
}

impl std::error::Error for LogError {}

fn failed(e: impl std::fmt::Display) -> LogError {
    LogError(e.to_string())
}

pub type Result<T> = std::result::Result<T, LogError>;

/// A connection to the NATS servers of a cluster.
#[derive(Clone)]
pub struct Nats {
    jetstream: jetstream::Context,
    cluster: String,
    /// Each stream's copies: one a server, three at most.
    replicas: usize,
}

impl Nats {
    /// Connects to the servers `urls` (`nats://host:port`) of cluster `cluster`.
    pub async fn connect(urls: &[String], cluster: &str) -> Result<Nats> {
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(5))
            // A server cut off neither answers nor refuses: missing three pings (in about
            // three seconds, not the client's default two minutes), it is left for another.
            .ping_interval(PING_EVERY)
            .request_timeout(Some(ACK_TIMEOUT))
            .connect(urls)
            .await
            .map_err(failed)?;
        let jetstream = jetstream::new(client);
        Ok(Nats { jetstream, cluster: cluster.to_string(), replicas: urls.len().clamp(1, 3) })
    }

    fn names(&self, shard: &str) -> (String, String) {
        let (cluster, shard) = (hex(&self.cluster), hex(shard));
        (format!("NEEDLE_{cluster}_{shard}"), format!("needle.{cluster}.{shard}"))
    }

    /// The stream of shard `shard` (its local index's name), made if missing.
    pub async fn open(&self, shard: &str) -> Result<ShardStream> {
        let (name, subject) = self.names(shard);
        let config = stream::Config {
            name: name.clone(),
            subjects: vec![subject.clone()],
            storage: stream::StorageType::File,
            num_replicas: self.replicas,
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        };
        let stream = self.jetstream.get_or_create_stream(config).await.map_err(failed)?;
        Ok(ShardStream { jetstream: self.jetstream.clone(), stream, subject })
    }

    /// Deletes shard `shard`'s stream, if there is one.
    pub async fn remove(&self, shard: &str) -> Result<()> {
        let (name, _) = self.names(shard);
        match self.jetstream.delete_stream(&name).await {
            Ok(_) => Ok(()),
            Err(e) if e.to_string().contains("not found") => Ok(()),
            Err(e) => Err(failed(e)),
        }
    }
}

/// One shard's stream.
#[derive(Clone)]
pub struct ShardStream {
    jetstream: jetstream::Context,
    stream: stream::Stream,
    subject: String,
}

impl ShardStream {
    /// The subject its messages go to (which names the cluster and the shard).
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// Sends `message` (see [`messages`]) to follow stream sequence `after`
    /// (JetStream refuses it otherwise); the future answers once JetStream
    /// holds it (or cannot).
    pub async fn publish(&self, message: Bytes, after: u64) -> Result<jetstream::context::PublishAckFuture> {
        let message =
            jetstream::message::PublishMessage::build().payload(message).expected_last_sequence(after);
        self.jetstream.send_publish(self.subject.clone(), message).await.map_err(failed)
    }

    /// Every write from `lsn` on, in order, and the sequence of the
    /// stream's last message.
    pub async fn read_from(&self, lsn: u64) -> Result<Read> {
        let mut stream = self.stream.clone();
        let state = &stream.info().await.map_err(failed)?.state;
        let (last, messages) = (state.last_sequence, state.messages);
        let mut reader = Reader::new(lsn);
        // Empty: never written, or trimmed whole.
        if messages == 0 {
            return Ok(reader.done(last));
        }
        let config =
            consumer::pull::OrderedConfig { filter_subject: self.subject.clone(), ..Default::default() };
        let consumer = stream.create_consumer(config).await.map_err(failed)?;
        let mut messages = consumer.messages().await.map_err(failed)?;
        let mut at = 0;
        loop {
            let Ok(next) = tokio::time::timeout(STALL, messages.next()).await else {
                return Err(LogError(format!(
                    "the stream of {} sent nothing for {STALL:?} after message {at} of {last}",
                    self.subject
                )));
            };
            let Some(message) = next else { break };
            let message = message.map_err(failed)?;
            let info = message.info().map_err(failed)?;
            at = info.stream_sequence;
            reader
                .read(&message.payload)
                .map_err(|e| LogError(format!("message {at} of {}: {e}", self.subject)))?;
            if at >= last {
                break;
            }
        }
        Ok(reader.done(last))
    }

    /// Takes the stream over for a copy holding every write up to `have`,
    /// if its last message is still `after` (what the copy read to): the
    /// writer's mark goes in, and its sequence, which the writer's first
    /// message must follow, comes back. Refused when anything came after.
    pub async fn take_over(&self, have: u64, after: u64) -> Result<u64> {
        let ack = self.publish(mark(have), after).await?.await.map_err(failed)?;
        Ok(ack.sequence)
    }

    /// What the stream holds after sequence `after` (a writer's own
    /// messages, unless another writer took the stream over: a writer's
    /// mark follows it). A writer whose publish failed learns from it what
    /// landed, messages sent before the failure and stored late included.
    pub async fn landed_after(&self, after: u64) -> Result<Landed> {
        let last = self.stream.clone().info().await.map_err(failed)?.state.last_sequence;
        let mut landed = Landed { last, fenced: false, through: 0 };
        for sequence in after + 1..=last {
            let message = self.stream.get_raw_message(sequence).await.map_err(failed)?;
            let entries = entries(&message.payload)
                .map_err(|e| LogError(format!("message {sequence} of {}: {e}", self.subject)))?;
            for (lsn, part, _) in entries {
                match part {
                    MARK => landed.fenced = true,
                    0 | 3 => landed.through = landed.through.max(lsn),
                    _ => {}
                }
            }
            if landed.fenced {
                break;
            }
        }
        Ok(landed)
    }
}

impl ShardStream {
    /// Drops the stream's messages before sequence `keep_from` (their writes
    /// are in a stored commit: see `crate::store`).
    pub async fn trim_before(&self, keep_from: u64) -> Result<()> {
        self.stream.purge().sequence(keep_from).await.map_err(failed).map(drop)
    }
}

/// What a stream holds after a writer's last confirmed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landed {
    /// The stream's last sequence.
    pub last: u64,
    /// Another writer took the stream over.
    pub fenced: bool,
    /// The newest write whose record the messages complete (0: none).
    pub through: u64,
}

/// A stream followed as it grows (a replica's): each message's writes, in order.
pub struct Tail {
    messages: consumer::pull::Ordered,
    reader: Reader,
    subject: String,
}

impl ShardStream {
    /// Follows the stream from sequence `start` on, keeping the writes from
    /// `lsn` on (a copy's next write).
    pub async fn tail(&self, start: u64, lsn: u64) -> Result<Tail> {
        let config = consumer::pull::OrderedConfig {
            filter_subject: self.subject.clone(),
            deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: start.max(1) },
            ..Default::default()
        };
        let consumer = self.stream.clone().create_consumer(config).await.map_err(failed)?;
        let messages = consumer.messages().await.map_err(failed)?;
        Ok(Tail { messages, reader: Reader::new(lsn), subject: self.subject.clone() })
    }
}

impl Tail {
    /// The stream sequence of the next message and the writes it completes,
    /// or `None` when none comes within `wait`.
    pub async fn next(&mut self, wait: Duration) -> Result<Option<(u64, Vec<(u64, Logged)>)>> {
        let Ok(next) = tokio::time::timeout(wait, self.messages.next()).await else { return Ok(None) };
        let message = next.ok_or_else(|| LogError(format!("the stream of {} ended", self.subject)))?;
        let message = message.map_err(failed)?;
        let at = message.info().map_err(failed)?.stream_sequence;
        self.reader
            .read(&message.payload)
            .map_err(|e| LogError(format!("message {at} of {}: {e}", self.subject)))?;
        Ok(Some((at, std::mem::take(&mut self.reader.out))))
    }
}

/// A write a stream holds: its record, or a gap's end (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logged {
    Write(Bytes),
    Gap,
}

/// What a stream holds from a write on.
#[derive(Debug, Default)]
pub struct Read {
    /// (sequence number, write), ascending.
    pub writes: Vec<(u64, Logged)>,
    /// The stream sequence of its last message, 0 for none.
    pub last_sequence: u64,
}

/// A writer's mark for a copy holding every write up to `have` (see the
/// module documentation): a gap when the stream's newest write is older.
pub fn mark(have: u64) -> Bytes {
    let mut out = Vec::new();
    let mut entries = Vec::new();
    entry(&mut entries, have, MARK, &[]);
    flush(&mut out, &mut entries, Some(have));
    out.remove(0).payload
}

/// A message to publish, and the last write it completes (none: a piece
/// of a record whose last piece is still to come).
pub struct Message {
    pub payload: Bytes,
    pub completes: Option<u64>,
}

/// `writes` (in order) as messages: whole records packed up to
/// [`MESSAGE_BYTES`] a message, a longer record in pieces of it.
pub fn messages<'a>(writes: impl IntoIterator<Item = &'a (u64, Bytes)>) -> Vec<Message> {
    let mut out = Vec::new();
    let mut entries: Vec<u8> = Vec::new();
    let mut last = None;
    for (lsn, record) in writes {
        if record.len() > MESSAGE_BYTES {
            flush(&mut out, &mut entries, last.take());
            let pieces: Vec<&[u8]> = record.chunks(MESSAGE_BYTES).collect();
            for (i, piece) in pieces.iter().enumerate() {
                let part = match i {
                    0 => 1,
                    _ if i + 1 == pieces.len() => 3,
                    _ => 2,
                };
                entry(&mut entries, *lsn, part, piece);
                flush(&mut out, &mut entries, (part == 3).then_some(*lsn));
            }
            continue;
        }
        if entries.len() + record.len() > MESSAGE_BYTES {
            flush(&mut out, &mut entries, last.take());
        }
        entry(&mut entries, *lsn, 0, record);
        last = Some(*lsn);
    }
    flush(&mut out, &mut entries, last);
    out
}

fn entry(entries: &mut Vec<u8>, lsn: u64, part: u8, bytes: &[u8]) {
    entries.extend_from_slice(&lsn.to_le_bytes());
    entries.push(part);
    entries.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    entries.extend_from_slice(bytes);
}

/// The entries so far as a message, if there are any.
fn flush(out: &mut Vec<Message>, entries: &mut Vec<u8>, completes: Option<u64>) {
    if entries.is_empty() {
        return;
    }
    let mut payload = Vec::with_capacity(HEAD + entries.len());
    payload.push(VERSION);
    payload.extend_from_slice(&crc32fast::hash(entries).to_le_bytes());
    payload.append(entries);
    out.push(Message { payload: payload.into(), completes });
}

/// Writes read back from messages in stream order: each from `from` on,
/// once (a copy sent again is skipped), its pieces joined.
struct Reader {
    from: u64,
    out: Vec<(u64, Logged)>,
    /// The newest write kept (0: none yet).
    kept: u64,
    /// A record being joined from its pieces: its write and the bytes so far.
    joining: Option<(u64, Vec<u8>)>,
}

impl Reader {
    fn new(from: u64) -> Reader {
        Reader { from, out: Vec::new(), kept: 0, joining: None }
    }

    fn done(self, last_sequence: u64) -> Read {
        Read { writes: self.out, last_sequence }
    }

    /// Takes in one message; an error names what is wrong with it.
    fn read(&mut self, message: &[u8]) -> std::result::Result<(), String> {
        entries(message)?.into_iter().try_for_each(|(lsn, part, bytes)| self.take(lsn, part, bytes))
    }

    fn take(&mut self, lsn: u64, part: u8, bytes: &[u8]) -> std::result::Result<(), String> {
        // The newest write kept, or the one before `from`: what is not newer was read already.
        let kept = self.kept.max(self.from.saturating_sub(1));
        let whole = match part {
            0 => Some(Logged::Write(Bytes::copy_from_slice(bytes))),
            1 => {
                self.joining = Some((lsn, bytes.to_vec()));
                None
            }
            2 | 3 => match &mut self.joining {
                Some((l, joined)) if *l == lsn => {
                    joined.extend_from_slice(bytes);
                    let last = (part == 3).then(|| self.joining.take().expect("joining").1);
                    last.map(|joined| Logged::Write(joined.into()))
                }
                // A stream trimmed through a record's first piece: the record is not wanted.
                _ if lsn <= kept => None,
                _ => return Err(format!("a piece of write {lsn} without its first")),
            },
            // The pieces of a record its node never finished logging are dropped with it.
            MARK => {
                self.joining = None;
                Some(Logged::Gap)
            }
            other => return Err(format!("an entry of unknown part {other}")),
        };
        if let Some(write) = whole.filter(|_| lsn > kept) {
            self.out.push((lsn, write));
            self.kept = lsn;
        }
        Ok(())
    }
}

/// An entry of a message: its write, part and bytes.
type Entry<'a> = (u64, u8, &'a [u8]);

/// A message's entries; an error names what is wrong with it.
fn entries(message: &[u8]) -> std::result::Result<Vec<Entry<'_>>, String> {
    let (head, entries) = message.split_at_checked(HEAD).ok_or("shorter than its head")?;
    if !(1..=VERSION).contains(&head[0]) {
        return Err(format!("format {} (this build reads 1 to {VERSION})", head[0]));
    }
    if crc32fast::hash(entries).to_le_bytes() != head[1..5] {
        return Err("its checksum does not match".into());
    }
    let mut out = Vec::new();
    let mut rest = entries;
    while !rest.is_empty() {
        let (entry, after) = rest.split_at_checked(ENTRY_HEAD).ok_or("an entry cut short")?;
        let lsn = u64::from_le_bytes(entry[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(entry[9..13].try_into().expect("4 bytes")) as usize;
        let (bytes, after) = after.split_at_checked(len).ok_or("a record cut short")?;
        out.push((lsn, entry[8], bytes));
        rest = after;
    }
    Ok(out)
}

/// `text` as lowercase hex: names that are safe in stream names and subjects alike.
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(messages: &[Message], from: u64) -> Vec<(u64, Bytes)> {
        let mut reader = Reader::new(from);
        for m in messages {
            reader.read(&m.payload).unwrap();
        }
        let writes = reader.done(0).writes.into_iter();
        writes.map(|(lsn, w)| (lsn, if let Logged::Write(b) = w { b } else { panic!("a gap") })).collect()
    }

    #[test]
    fn writes_pack_into_messages_and_read_back_once_each() {
        let record = |n: usize, b: u8| Bytes::from(vec![b; n]);
        let writes: Vec<(u64, Bytes)> = vec![
            (5, record(10, 1)),
            (6, record(MESSAGE_BYTES - 40, 2)),
            (7, record(2 * MESSAGE_BYTES + 3, 3)),
            (8, record(0, 4)),
            (9, record(MESSAGE_BYTES, 5)),
        ];
        let messages = messages(&writes);
        assert!(messages.iter().all(|m| m.payload.len() <= HEAD + ENTRY_HEAD + MESSAGE_BYTES + ENTRY_HEAD));
        let completes: Vec<Option<u64>> = messages.iter().map(|m| m.completes).collect();
        assert_eq!(completes, [Some(6), None, None, Some(7), Some(8), Some(9)]);
        assert_eq!(read_back(&messages, 1), writes);
        assert_eq!(read_back(&messages, 7), writes[2..]);
        // Sent again from write 6 after a failure: each write read once, in order.
        let mut again = messages;
        again.extend(super::messages(&writes[1..]));
        assert_eq!(read_back(&again, 1), writes);
    }

    #[test]
    fn damaged_messages_are_errors_that_name_the_damage() {
        let one = messages(&[(3, Bytes::from_static(b"ab"))]).remove(0).payload.to_vec();
        assert_eq!(
            one,
            [
                [2].as_slice(),
                &crc32fast::hash(&one[5..]).to_le_bytes(),
                &[3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, b'a', b'b']
            ]
            .concat()
        );
        let mut flipped = one.clone();
        flipped[14] ^= 1;
        assert!(Reader::new(1).read(&flipped).unwrap_err().contains("checksum"));
        let mut newer = one.clone();
        newer[0] = 3;
        assert!(Reader::new(1).read(&newer).unwrap_err().contains("format 3"));
        let mut format_1 = one.clone();
        format_1[0] = 1;
        assert!(Reader::new(1).read(&format_1).is_ok(), "format 1 is still read");
        assert!(Reader::new(1).read(&one[..3]).is_err());
        let piece = messages(&[(4, Bytes::from(vec![0; MESSAGE_BYTES + 1]))]).remove(1);
        assert!(Reader::new(1).read(&piece.payload).unwrap_err().contains("without its first"));
        // A stream trimmed through write 4's first piece, read from write 5 on.
        let mut trimmed = Reader::new(5);
        assert!(trimmed.read(&piece.payload).is_ok(), "a piece of a write not wanted is passed over");
        assert!(trimmed.out.is_empty());
    }

    #[test]
    fn a_gap_ends_the_stream_before_it_and_drops_an_unfinished_record() {
        let record = |b: u8| Bytes::from(vec![b; 3]);
        let mut stream = messages(&[(1, record(1)), (2, record(2))]);
        // Write 3's first piece, then its node failed: a gap through 4 marked after it.
        stream.push(messages(&[(3, Bytes::from(vec![3; MESSAGE_BYTES + 1]))]).remove(0));
        stream.push(Message { payload: mark(4), completes: Some(4) });
        stream.extend(messages(&[(5, record(5))]));
        let mut reader = Reader::new(2);
        for m in &stream {
            reader.read(&m.payload).unwrap();
        }
        let read = reader.done(0);
        let want = vec![(2, Logged::Write(record(2))), (4, Logged::Gap), (5, Logged::Write(record(5)))];
        assert_eq!(read.writes, want);
        // A record's first piece alone is no write.
        let mut reader = Reader::new(1);
        for m in &stream[..2] {
            reader.read(&m.payload).unwrap();
        }
        assert_eq!(reader.done(0).writes.iter().map(|w| w.0).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn names_keep_to_what_streams_and_subjects_allow() {
        assert_eq!(hex("a.b-1"), "612e622d31");
        let name = format!("NEEDLE_{}_{}", hex("c"), hex("logs.shard-0"));
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{name}");
    }
}
