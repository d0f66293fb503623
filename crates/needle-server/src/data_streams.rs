//! Data streams, as Elasticsearch has them since 7.9: a name that writes
//! append to (`create` only, each document with one timestamp) and searches
//! read across, backed by hidden indexes `.ds-NAME-000001`, `-000002`...,
//! the last of which takes the writes. A stream is made from the index
//! template matching its name that has a `data_stream` (by
//! `PUT /_data_stream/NAME` or by a first write to the name); a rollover
//! adds the next backing index.
//!
//! This registry is the one place that knows which indexes back which
//! stream; the indexes themselves are the catalog's. On disk,
//! `data_streams.json` in the data folder, replaced whole at each change
//! (see `kept_file.rs`):
//!
//! ```text
//! File   := Body Footer(kind "DSTR", version 1)
//! Body   := {"streams": {NAME: Stream}}   (JSON)
//! Stream := {"timestamp_field": FIELD, "template": TEMPLATE, "generation": N, "indices": [INDEX...]}
//! ```
//!
//! A backing index is made before the stream names it, so a crash between
//! the two leaves an index no stream names: the stream's next backing
//! index, adopted when the registry is opened (see [`DataStreams::open`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::kept_file;

const FILE: &str = "data_streams.json";
const KIND: &[u8; 4] = b"DSTR";
const VERSION: u32 = 1;

/// One data stream.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stream {
    /// The field every document must have one date in (`@timestamp` unless the template names another).
    pub timestamp_field: String,
    /// The index template it was made from.
    pub template: String,
    /// The number of its latest backing index.
    pub generation: u32,
    /// Its backing indexes, oldest first; the last takes the writes.
    pub indices: Vec<String>,
}

impl Stream {
    pub fn write_index(&self) -> &str {
        self.indices.last().map_or("", String::as_str)
    }
}

/// The name of stream `name`'s backing index of `generation`.
pub fn backing_index(name: &str, generation: u32) -> String {
    format!(".ds-{name}-{generation:06}")
}

#[derive(Default, Serialize, Deserialize)]
struct Kept {
    streams: BTreeMap<String, Stream>,
}

impl Kept {
    fn backed_by(&self, index: &str) -> Option<(String, Stream)> {
        let mut backed = self.streams.iter().filter(|(_, s)| s.indices.iter().any(|i| i == index));
        backed.next().map(|(n, s)| (n.clone(), s.clone()))
    }
}

pub struct DataStreams {
    file: PathBuf,
    kept: RwLock<Kept>,
}

/// The streams locked for reading ([`DataStreams::read`]).
pub struct Streams<'a>(RwLockReadGuard<'a, Kept>);

impl Streams<'_> {
    pub fn get(&self, name: &str) -> Option<&Stream> {
        self.0.streams.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Stream)> {
        self.0.streams.iter()
    }

    /// The timestamp field of the stream `index` backs, if it backs one.
    pub fn timestamp_field_of(&self, index: &str) -> Option<&str> {
        let mut backed = self.0.streams.values().filter(|s| s.indices.iter().any(|i| i == index));
        backed.next().map(|s| s.timestamp_field.as_str())
    }
}

/// The streams locked for a change: read them, change them, then [`Change::keep`].
pub struct Change<'a> {
    file: &'a Path,
    kept: RwLockWriteGuard<'a, Kept>,
}

impl DataStreams {
    /// The streams kept in folder `data`; `exists` tells which indexes there
    /// are, so a backing index made by a rollover that a crash cut short is
    /// adopted by its stream.
    pub fn open(data: &Path, exists: impl Fn(&str) -> bool) -> std::io::Result<DataStreams> {
        let file = data.join(FILE);
        let mut kept: Kept = kept_file::read(&file, KIND, VERSION)?.unwrap_or_default();
        let mut adopted = false;
        for (name, s) in kept.streams.iter_mut() {
            let next = backing_index(name, s.generation + 1);
            if exists(&next) {
                s.generation += 1;
                s.indices.push(next);
                adopted = true;
            }
        }
        if adopted {
            kept_file::write(&file, &kept, KIND, VERSION, "data streams")
                .map_err(|e| std::io::Error::other(e.reason))?;
        }
        Ok(DataStreams { file, kept: RwLock::new(kept) })
    }

    pub fn get(&self, name: &str) -> Option<Stream> {
        self.read().get(name).cloned()
    }

    /// The streams as they are, locked for reading (what a request reads on
    /// every write or search, looked at in place rather than copied).
    pub fn read(&self) -> Streams<'_> {
        Streams(self.kept.read().expect("data streams lock"))
    }

    /// Every stream, by name.
    pub fn all(&self) -> BTreeMap<String, Stream> {
        self.kept.read().expect("data streams lock").streams.clone()
    }

    /// The stream `index` backs, with its name.
    pub fn backed_by(&self, index: &str) -> Option<(String, Stream)> {
        self.kept.read().expect("data streams lock").backed_by(index)
    }

    /// The streams locked for a change (one change at a time, so two
    /// requests making one stream make it once).
    pub fn change(&self) -> Change<'_> {
        Change { file: &self.file, kept: self.kept.write().expect("data streams lock") }
    }
}

impl Change<'_> {
    pub fn get(&self, name: &str) -> Option<&Stream> {
        self.kept.streams.get(name)
    }

    /// The stream `index` backs, with its name.
    pub fn backed_by(&self, index: &str) -> Option<(String, Stream)> {
        self.kept.backed_by(index)
    }

    /// Sets stream `name` (`None`: removes it) and writes the file before the change is seen.
    pub fn keep(&mut self, name: &str, stream: Option<Stream>) -> ApiResult<()> {
        let before = match stream {
            Some(s) => self.kept.streams.insert(name.to_string(), s),
            None => self.kept.streams.remove(name),
        };
        let written = kept_file::write(self.file, &*self.kept, KIND, VERSION, "data streams");
        if written.is_err() {
            match before {
                Some(s) => self.kept.streams.insert(name.to_string(), s),
                None => self.kept.streams.remove(name),
            };
        }
        written
    }
}

/// Elasticsearch's rules for a data stream's name (an index's, told of as a data stream's).
pub fn check_name(name: &str) -> ApiResult<()> {
    let bad = |why: &str| Err(ApiError::illegal_argument(format!("data_stream [{name}] {why}")));
    if name.to_lowercase() != name {
        return bad("must be lowercase");
    }
    if name.chars().any(|c| "\\/*?\"<>| ,".contains(c)) {
        return bad("must not contain the following characters [ , \", *, \\, <, |, ,, >, /, ?]");
    }
    if name.starts_with(['-', '_', '+', '.']) {
        return bad("must not start with '_', '-', '+' or '.'");
    }
    crate::catalog::check_name(name)
}

/// The error of a write to a stream that is not a `create`.
pub fn create_only() -> ApiError {
    ApiError::illegal_argument("only write ops with an op_type of create are allowed in data streams")
}

/// The error of a read of one document through a stream (it may be in any of its indexes).
pub fn not_one_index(name: &str) -> ApiError {
    let mut e =
        ApiError::new(axum::http::StatusCode::NOT_FOUND, "index_not_found_exception", "no such index [null]");
    e.extra.insert("resource.id".into(), json!(name));
    e.extra.insert("resource.type".into(), json!("index_expression"));
    e.extra.insert("excluded_ds".into(), json!("true"));
    e
}

/// A document of a stream must hold one date in `field`: a string or a
/// number (a date the mapping then reads), alone or as a list of one. One
/// that is not a JSON object gets the document parser's error.
pub fn check_timestamp(field: &str, source: &[u8]) -> ApiResult<()> {
    let doc = match serde_json::from_slice::<serde_json::Value>(source) {
        Ok(doc) if doc.is_object() => doc,
        _ => return crate::call::check_document(source),
    };
    let at = doc.get(field).or_else(|| doc.pointer(&format!("/{}", field.replace('.', "/"))));
    let one = match at {
        Some(serde_json::Value::Array(list)) if list.len() == 1 => list.first(),
        other => other,
    };
    match one {
        Some(v) if v.is_string() || v.is_number() => Ok(()),
        _ => {
            let mut e = ApiError::bad_request("mapper_parsing_exception", "failed to parse");
            let cause = ApiError::illegal_argument(format!(
                "documents must contain a single-valued timestamp field '{field}' of date type"
            ));
            e.extra.insert("caused_by".into(), cause.item_body());
            Err(e)
        }
    }
}

/// What `GET /_data_stream` shows of stream `name`: each backing index with its uuid (`uuid_of`).
pub fn shown(name: &str, s: &Stream, uuid_of: impl Fn(&str) -> String) -> serde_json::Value {
    let indices: Vec<_> =
        s.indices.iter().map(|i| json!({"index_name": i, "index_uuid": uuid_of(i)})).collect();
    json!({
        "name": name,
        "timestamp_field": {"name": s.timestamp_field},
        "indices": indices,
        "generation": s.generation,
        "status": "GREEN",
        "template": s.template,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_needs_one_timestamp() {
        assert!(check_timestamp("@timestamp", br#"{"@timestamp": "2026-01-01"}"#).is_ok());
        assert!(check_timestamp("@timestamp", br#"{"@timestamp": 1700000000000}"#).is_ok());
        assert!(check_timestamp("event.at", br#"{"event": {"at": "2026-01-01"}}"#).is_ok());
        for bad in
            [r#"{"msg": "x"}"#, r#"{"@timestamp": ["2026-01-01", "2026-01-02"]}"#, r#"{"@timestamp": null}"#]
        {
            let e = check_timestamp("@timestamp", bad.as_bytes()).unwrap_err();
            assert_eq!(e.kind, "mapper_parsing_exception", "{bad}");
        }
        for malformed in ["{\"@timestamp\": ", "[1]"] {
            let e = check_timestamp("@timestamp", malformed.as_bytes()).unwrap_err();
            assert_eq!(e.kind, "document_parsing_exception", "{malformed}");
        }
    }

    #[test]
    fn names_follow_elasticsearch() {
        assert!(check_name("logs-app").is_ok());
        for bad in ["Logs", "a,b", "a*", ".x", "_x"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_rollover_cut_short_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let streams = DataStreams::open(dir.path(), |_| false).unwrap();
        let s = Stream {
            timestamp_field: "@timestamp".into(),
            template: "t".into(),
            generation: 1,
            indices: vec![backing_index("logs", 1)],
        };
        streams.change().keep("logs", Some(s)).unwrap();
        drop(streams);
        let streams = DataStreams::open(dir.path(), |i| i == ".ds-logs-000002").unwrap();
        let s = streams.get("logs").unwrap();
        assert_eq!((s.generation, s.write_index()), (2, ".ds-logs-000002"));
        let streams = DataStreams::open(dir.path(), |_| false).unwrap();
        assert_eq!(streams.get("logs").unwrap().generation, 2, "the adoption was kept");
    }
}
