//! The ingest log in NATS JetStream: each shard of a cluster index has a
//! stream of its own, named `NEEDLE_{cluster}_{shard}` (the names hex-coded:
//! a stream name allows no dots) over the one subject
//! `needle.{cluster}.{shard}`, stored in files and replicated on up to three
//! of the NATS servers. The shard's node publishes every write there in
//! order: the payload is the engine's log record, headers `Needle-Lsn` (the
//! write's sequence number, `_seq_no` + 1) and `Nats-Msg-Id` (the same, so
//! JetStream drops a retried publish it already holds). JetStream answers a
//! publish once a quorum of the stream's replicas holds it; the node
//! acknowledges the write only then. A node that lost writes (restarted
//! without its disk's latest state) reads them back from the stream.

use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use async_nats::HeaderMap;
use bytes::Bytes;
use futures_util::StreamExt;

/// The header holding a message's write sequence number.
const LSN_HEADER: &str = "Needle-Lsn";
/// How long a publish waits for JetStream's answer.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);

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
pub struct ShardStream {
    jetstream: jetstream::Context,
    stream: stream::Stream,
    subject: String,
}

impl ShardStream {
    /// Sends write `lsn`; the future answers once JetStream holds it (or cannot).
    pub async fn publish(&self, lsn: u64, record: Bytes) -> Result<jetstream::context::PublishAckFuture> {
        let mut headers = HeaderMap::new();
        headers.insert(LSN_HEADER, lsn.to_string().as_str());
        headers.insert("Nats-Msg-Id", lsn.to_string().as_str());
        self.jetstream.publish_with_headers(self.subject.clone(), headers, record).await.map_err(failed)
    }

    /// Every write from `lsn` on, in order, as (sequence number, record).
    pub async fn read_from(&self, lsn: u64) -> Result<Vec<(u64, Bytes)>> {
        let mut stream = self.stream.clone();
        let last = stream.info().await.map_err(failed)?.state.last_sequence;
        let mut out = Vec::new();
        if last == 0 {
            return Ok(out);
        }
        let config =
            consumer::pull::OrderedConfig { filter_subject: self.subject.clone(), ..Default::default() };
        let consumer = stream.create_consumer(config).await.map_err(failed)?;
        let mut messages = consumer.messages().await.map_err(failed)?;
        while let Some(message) = messages.next().await {
            let message = message.map_err(failed)?;
            let info = message.info().map_err(failed)?;
            let at = info.stream_sequence;
            let logged = message.headers.as_ref().and_then(|h| h.get(LSN_HEADER)).map(|v| v.as_str().parse());
            let Some(Ok(logged)) = logged else {
                return Err(LogError(format!("message {at} of {} has no write number", self.subject)));
            };
            if logged >= lsn {
                out.push((logged, message.payload.clone()));
            }
            if at >= last {
                break;
            }
        }
        Ok(out)
    }
}

/// `text` as lowercase hex: names that are safe in stream names and subjects alike.
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_to_what_streams_and_subjects_allow() {
        assert_eq!(hex("a.b-1"), "612e622d31");
        let name = format!("NEEDLE_{}_{}", hex("c"), hex("logs.shard-0"));
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{name}");
    }
}
