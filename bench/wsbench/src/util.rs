//! Small shared helpers: opening (gzipped) JSON-lines input, writing (gzipped)
//! output, parsing sizes like `512MB`, and the simple word tokenizer the corpus
//! statistics and the scale generator use (lowercased runs of letters and digits).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Result<T> = std::result::Result<T, BoxError>;

/// Opens a file for reading lines; gzip is recognized by its magic bytes.
pub fn open_input(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let mut file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic)?;
    let file = File::open(path)?;
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::with_capacity(1 << 20, MultiGzDecoder::new(BufReader::new(file)))))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
    }
}

/// Creates a file for writing, gzip-compressed (fast level) when its name ends in `.gz`.
pub fn create_output(path: &Path) -> Result<Box<dyn Write + Send>> {
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent)?;
        }
    }
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let w = BufWriter::with_capacity(1 << 20, file);
    if path.extension().is_some_and(|e| e == "gz") {
        Ok(Box::new(GzEncoder::new(w, flate2::Compression::fast())))
    } else {
        Ok(Box::new(w))
    }
}

pub use needle_core::parse_size;

/// Calls `f` for every word of `text`: maximal runs of alphanumeric characters, lowercased.
pub fn for_each_word(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    buf.clear();
    for c in text.chars() {
        if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                buf.push(l);
            }
        } else if !buf.is_empty() {
            f(buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        f(buf);
        buf.clear();
    }
}

/// Reads the whole of stdin-like input as lines, skipping empty ones.
pub fn read_lines(path: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for line in open_input(path)?.lines() {
        let line = line?;
        if !line.trim().is_empty() {
            out.push(line);
        }
    }
    Ok(out)
}
