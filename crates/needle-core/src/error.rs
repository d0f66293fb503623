//! Errors that cross layers. Each variant is a case a caller can match, and
//! its message names the thing at fault: the file that is corrupt (and where),
//! the input line and field that broke the schema, the process holding a lock.

use std::fmt;
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system call failed on a named file.
    #[error("I/O error on {}: {source}", file.display())]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file's bytes do not follow its format: bad checksum, truncated, out of
    /// range, a gap in a log. `offset` is where in the file, when known.
    #[error("corrupt file {file}{}: {what}", at(*offset))]
    Corrupt { file: String, offset: Option<u64>, what: String },
    /// A file was written by a format version this build does not read.
    #[error("unsupported format in {file}: {reason}")]
    Format { file: String, reason: String },
    /// Another writer holds the index's writer lock.
    #[error("{} is locked by another writer ({holder})", path.display())]
    Locked { path: PathBuf, holder: String },
    /// A write or fsync failed earlier: the index refuses writes (it stays
    /// readable), since what the failed write held may be gone from the page cache.
    #[error("the index refuses writes after a failed write to disk: {cause}")]
    Poisoned { cause: String },
    /// A document, mapping or argument that cannot be accepted. `line` is
    /// the input line (or write-ahead-log record), `field` the field at fault.
    #[error("{}", InvalidInputMessage { line: *line, field: field.as_deref(), reason })]
    InvalidInput { line: Option<u64>, field: Option<String>, reason: String },
    /// A query that cannot be parsed or run as written.
    #[error("bad query: {reason}")]
    Query { reason: String },
    /// Something named does not exist: an index folder, a field.
    #[error("{what} not found")]
    NotFound { what: String },
    /// A write whose condition on the document's current version failed
    /// (Elasticsearch's optimistic concurrency); nothing was changed.
    #[error("[{id}]: version conflict, {reason}")]
    Conflict { id: String, reason: String },
    /// The operating system refused a resource (a thread, memory).
    #[error("out of resources: {what}")]
    Resources { what: String },
    /// A system the index depends on did not answer (the replicated log a
    /// write must reach before it is acknowledged).
    #[error("unavailable: {what}")]
    Unavailable { what: String },
}

fn at(offset: Option<u64>) -> String {
    offset.map(|o| format!(" at byte {o}")).unwrap_or_default()
}

struct InvalidInputMessage<'a> {
    line: Option<u64>,
    field: Option<&'a str>,
    reason: &'a str,
}

impl fmt::Display for InvalidInputMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if let Some(field) = self.field {
            // The reason usually names the field itself; say it only when it does not.
            if !self.reason.contains(&format!("`{field}`")) {
                write!(f, "field `{field}`: ")?;
            }
        }
        f.write_str(self.reason)
    }
}

impl Error {
    pub fn io(file: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { file: file.into(), source }
    }

    /// Corruption somewhere in `file` (the offset is not known).
    pub fn corrupt(file: impl Into<String>, what: impl Into<String>) -> Self {
        Error::Corrupt { file: file.into(), offset: None, what: what.into() }
    }

    /// Corruption at byte `offset` of `file`.
    pub fn corrupt_at(file: impl Into<String>, offset: u64, what: impl Into<String>) -> Self {
        Error::Corrupt { file: file.into(), offset: Some(offset), what: what.into() }
    }

    /// Input that cannot be accepted, not tied to a line or a field.
    pub fn invalid(reason: impl Into<String>) -> Self {
        Error::InvalidInput { line: None, field: None, reason: reason.into() }
    }

    /// A value of `field` that cannot be accepted.
    pub fn invalid_field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidInput { line: None, field: Some(field.into()), reason: reason.into() }
    }

    pub fn query(reason: impl Into<String>) -> Self {
        Error::Query { reason: reason.into() }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Error::NotFound { what: what.into() }
    }

    /// The same error about input line `line` (a document's errors do not know their line).
    pub fn at_line(self, line: u64) -> Self {
        match self {
            Error::InvalidInput { field, reason, .. } => {
                Error::InvalidInput { line: Some(line), field, reason }
            }
            other => other,
        }
    }

    /// Whether this is a failed call on a file that does not exist.
    pub fn is_missing_file(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Text from outside (an id, a file's bytes) fit for a message: control
/// characters escaped, cut to `max` characters with the full length noted.
pub fn printable(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).flat_map(char::escape_debug).collect();
    let n = text.chars().count();
    if n > max {
        out.push_str(&format!("... ({n} characters)"));
    }
    out
}

/// Bytes from a file (a kind tag, a magic number) fit for a message.
pub fn printable_bytes(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_is_at_fault() {
        let e = Error::corrupt_at("seg_1.post", 4096, "doc ids not ascending");
        assert_eq!(e.to_string(), "corrupt file seg_1.post at byte 4096: doc ids not ascending");
        let e = Error::invalid_field("year", "expected a number").at_line(7);
        assert_eq!(e.to_string(), "line 7: field `year`: expected a number");
        let e = Error::invalid_field("year", "field `year` is a long").at_line(7);
        assert_eq!(e.to_string(), "line 7: field `year` is a long");
        assert!(matches!(e, Error::InvalidInput { line: Some(7), .. }));
    }

    #[test]
    fn outside_text_is_escaped_and_cut() {
        assert_eq!(printable("a\u{1}b", 10), "a\\u{1}b");
        assert_eq!(printable(&"x".repeat(600), 5), "xxxxx... (600 characters)");
        assert_eq!(printable_bytes(b"\x00ERM"), "\\x00ERM");
    }
}
