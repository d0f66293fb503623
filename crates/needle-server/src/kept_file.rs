//! A small JSON file the server keeps in its data folder (the templates, the
//! data streams), replaced whole at each change: written aside, synced,
//! renamed, the folder synced. Each such file is its JSON body followed by
//! needle-codecs' footer (the body's length and CRC-32, the file's kind and
//! version), so a torn or damaged file is refused by name, never half read.

use std::path::Path;

use axum::http::StatusCode;
use needle_codecs::footer;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{ApiError, ApiResult};

/// The body of `file` (`None` when there is no such file), checked by its
/// footer: of `kind`, at `version` or one before it.
pub fn read<T: DeserializeOwned>(file: &Path, kind: &[u8; 4], version: u32) -> std::io::Result<Option<T>> {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("kept file");
    let bad = |e: &dyn std::fmt::Display| std::io::Error::other(format!("{}: {e}", file.display()));
    let (len, _) = footer::verify(name, &bytes, kind, version).map_err(|e| bad(&e))?;
    serde_json::from_slice(&bytes[..len]).map(Some).map_err(|e| bad(&e))
}

/// Replaces `file` with `body`; `what` names the contents in the error.
pub fn write<T: Serialize>(file: &Path, body: &T, kind: &[u8; 4], version: u32, what: &str) -> ApiResult<()> {
    let mut bytes = serde_json::to_vec(body).expect("a kept file serializes");
    footer::append(&mut bytes, kind, version);
    let tmp = file.with_extension("json.tmp");
    let written = std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|()| std::fs::rename(&tmp, file))
        .and_then(|()| std::fs::File::open(file.parent().expect("a data folder"))?.sync_all());
    written.map_err(|e| {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "exception", format!("cannot write the {what}: {e}"))
    })
}
