//! Errors that cross layers. Each names the thing at fault: the file that is
//! corrupt, the line that is malformed, the field whose value broke the schema.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system call failed on a named file.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file's bytes do not follow its format: bad checksum, truncated, out of range.
    #[error("corrupt index file {file}: {reason}")]
    Corrupt { file: String, reason: String },
    /// A file was written by a format version this build does not read.
    #[error("unsupported format in {file}: {reason}")]
    Format { file: String, reason: String },
    /// A document does not fit the index's schema.
    #[error("{0}")]
    Schema(String),
    /// An input line could not be read as a document.
    #[error("line {line}: {reason}")]
    Input { line: u64, reason: String },
    /// A query could not be parsed or refers to something that cannot be searched.
    #[error("bad query: {0}")]
    Query(String),
    /// The index cannot be used as asked (locked, missing, not an index).
    #[error("{0}")]
    Index(String),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    pub fn corrupt(file: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Corrupt { file: file.into(), reason: reason.into() }
    }
}
