//! The footer every Needle file ends with.
//!
//! ```text
//! File   := Body Footer
//! Footer := Kind[4] Version:u32 BodyLen:u64 Crc32:u32 Magic:u32     (24 bytes, little-endian)
//! ```
//!
//! `Kind` names the format (`TERM`, `POST`, `NORM`, `DOCS`, `META`, `MANI`),
//! `Version` its version, `BodyLen` the length of `Body` (so a truncated file
//! is told apart from a corrupt one), `Crc32` the CRC-32 (IEEE) of everything
//! before it, and `Magic` is `0x314C_444E` ("NDL1"). Example: a 10-byte
//! terms file of version 1 ends in `54 45 52 4D | 01 00 00 00 | 0A 00 .. 00 | crc | 4E 44 4C 31`.

use needle_core::{Error, Result};
use needle_storage::FileSlice;

pub const FOOTER_LEN: usize = 24;
const MAGIC: u32 = 0x314C_444E;

/// Appends the footer for `body` (the whole file so far) of format `kind` / `version`.
pub fn append(body: &mut Vec<u8>, kind: &[u8; 4], version: u32) {
    let body_len = body.len() as u64;
    body.extend_from_slice(kind);
    body.extend_from_slice(&version.to_le_bytes());
    body.extend_from_slice(&body_len.to_le_bytes());
    let crc = crc32fast::hash(body);
    body.extend_from_slice(&crc.to_le_bytes());
    body.extend_from_slice(&MAGIC.to_le_bytes());
}

/// Builds a footer for a file written in pieces; `hasher` has seen the body.
pub fn footer_for(mut hasher: crc32fast::Hasher, body_len: u64, kind: &[u8; 4], version: u32) -> Vec<u8> {
    let mut tail = Vec::with_capacity(FOOTER_LEN);
    tail.extend_from_slice(kind);
    tail.extend_from_slice(&version.to_le_bytes());
    tail.extend_from_slice(&body_len.to_le_bytes());
    hasher.update(&tail);
    tail.extend_from_slice(&hasher.finalize().to_le_bytes());
    tail.extend_from_slice(&MAGIC.to_le_bytes());
    tail
}

/// Checks the footer and checksum of a whole file; returns the body's length
/// and the format version. Errors name `file`.
pub fn verify(file: &str, bytes: &[u8], kind: &[u8; 4], max_version: u32) -> Result<(usize, u32)> {
    let crc = || Ok(crc32fast::hash(&bytes[..bytes.len() - 8]));
    check(file, bytes.len(), tail_of(bytes), Some(&crc), kind, max_version)
}

/// [`verify`] of an open file, read through its backend: the footer, then
/// the body in chunks for the checksum. Without `checksum`, only the footer's
/// magic, kind, length and version are checked, which reads the file's last bytes.
pub fn verify_file(
    file: &FileSlice,
    kind: &[u8; 4],
    max_version: u32,
    checksum: bool,
) -> Result<(usize, u32)> {
    const CHUNK: usize = 1 << 20;
    let len = file.len();
    let tail = if len >= FOOTER_LEN { Some(file.read(len - FOOTER_LEN..len)?) } else { None };
    let crc = || {
        let mut hasher = crc32fast::Hasher::new();
        for start in (0..len - 8).step_by(CHUNK) {
            hasher.update(&file.read_once(start..(start + CHUNK).min(len - 8))?);
        }
        Ok(hasher.finalize())
    };
    let crc: Option<&dyn Fn() -> Result<u32>> = if checksum { Some(&crc) } else { None };
    check(file.name(), len, tail.as_deref(), crc, kind, max_version)
}

/// The CRC-32 a whole file's footer holds (the file must have passed [`verify`]).
pub fn stored_crc(bytes: &[u8]) -> u32 {
    let at = bytes.len() - 8;
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn tail_of(bytes: &[u8]) -> Option<&[u8]> {
    bytes.len().checked_sub(FOOTER_LEN).map(|at| &bytes[at..])
}

/// Checks a file of `len` bytes by its footer `tail` (None: shorter than a
/// footer) and, when given `crc` (the CRC of all but the last 8 bytes), its checksum.
fn check(
    file: &str,
    len: usize,
    tail: Option<&[u8]>,
    crc: Option<&dyn Fn() -> Result<u32>>,
    kind: &[u8; 4],
    max_version: u32,
) -> Result<(usize, u32)> {
    let Some(tail) = tail else {
        return Err(Error::corrupt(file, format!("truncated: {len} bytes, shorter than a footer")));
    };
    let magic = u32::from_le_bytes(tail[20..24].try_into().unwrap());
    if magic != MAGIC {
        return Err(Error::corrupt(file, "no footer (bad magic): truncated or not a Needle file"));
    }
    if &tail[0..4] != kind {
        let found = needle_core::printable_bytes(&tail[0..4]);
        let want = needle_core::printable_bytes(kind);
        return Err(Error::corrupt(file, format!("file kind is {found}, expected {want}")));
    }
    let body_len = u64::from_le_bytes(tail[8..16].try_into().unwrap());
    if body_len != (len - FOOTER_LEN) as u64 {
        return Err(Error::corrupt(
            file,
            format!("length {} does not match the footer's {}", len - FOOTER_LEN, body_len),
        ));
    }
    let stored = u32::from_le_bytes(tail[16..20].try_into().unwrap());
    if let Some(crc) = crc {
        let actual = crc()?;
        if stored != actual {
            return Err(Error::corrupt(
                file,
                format!("checksum mismatch (stored {stored:08x}, computed {actual:08x})"),
            ));
        }
    }
    let version = u32::from_le_bytes(tail[4..8].try_into().unwrap());
    if version == 0 || version > max_version {
        return Err(Error::Format {
            file: file.to_string(),
            reason: format!("format version {version}; this build reads 1..={max_version}"),
        });
    }
    Ok((body_len as usize, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_flip_detected() {
        let mut file = b"some body bytes".to_vec();
        append(&mut file, b"TEST", 1);
        assert_eq!(verify("f", &file, b"TEST", 1).unwrap(), (15, 1));
        for i in 0..file.len() {
            let mut bad = file.clone();
            bad[i] ^= 0x10;
            let err = verify("f.test", &bad, b"TEST", 1).unwrap_err().to_string();
            assert!(err.contains("f.test"), "{err}");
        }
        for cut in 0..file.len() {
            assert!(verify("f", &file[..cut], b"TEST", 1).is_err());
        }
    }

    #[test]
    fn a_damaged_kind_is_shown_escaped() {
        let mut file = b"x".to_vec();
        append(&mut file, b"\x01\x1b[J", 1);
        let err = verify("f", &file, b"TEST", 1).unwrap_err().to_string();
        assert!(err.contains("\\x01\\x1b[J") && !err.contains('\x1b'), "{err}");
    }

    #[test]
    fn newer_version_is_refused() {
        let mut file = b"x".to_vec();
        append(&mut file, b"TEST", 2);
        assert!(matches!(verify("f", &file, b"TEST", 1), Err(Error::Format { .. })));
    }

    #[test]
    fn piecewise_footer_equals_whole() {
        let mut whole = b"abc".to_vec();
        append(&mut whole, b"TEST", 1);
        let mut h = crc32fast::Hasher::new();
        h.update(b"abc");
        let mut pieces = b"abc".to_vec();
        pieces.extend(footer_for(h, 3, b"TEST", 1));
        assert_eq!(whole, pieces);
    }
}
