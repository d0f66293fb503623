//! A file writer that checksums what it writes and ends the file with its footer.

use needle_core::Result;
use needle_storage::FileWriter;

use crate::footer;
use crate::meta::FileStamp;

pub struct ChecksummedWriter {
    out: FileWriter,
    hasher: crc32fast::Hasher,
}

impl ChecksummedWriter {
    pub fn new(out: FileWriter) -> Self {
        ChecksummedWriter { out, hasher: crc32fast::Hasher::new() }
    }

    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.hasher.update(bytes);
        self.out.write_all(bytes)
    }

    pub fn position(&self) -> u64 {
        self.out.position()
    }

    /// Appends the footer, fsyncs, and returns the file's length and checksum.
    pub fn finish(mut self, kind: &[u8; 4], version: u32) -> Result<FileStamp> {
        let body_len = self.out.position();
        let tail = footer::footer_for(self.hasher.clone(), body_len, kind, version);
        self.out.write_all(&tail)?;
        let len = self.out.finish()?;
        Ok(FileStamp { len, crc: footer::stored_crc(&tail) })
    }
}
