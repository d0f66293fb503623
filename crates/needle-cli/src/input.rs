//! Opening an input: a file (gzip-compressed when it starts with the gzip magic) or stdin.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use needle_core::{Error, Result};

pub fn open(path: &str) -> Result<Box<dyn BufRead + Send>> {
    if path == "-" {
        return Ok(Box::new(BufReader::with_capacity(1 << 20, io::stdin())));
    }
    let mut file = File::open(Path::new(path)).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(|e| Error::io(path, e))?;
    let file = File::open(Path::new(path)).map_err(|e| Error::io(path, e))?;
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::with_capacity(1 << 20, MultiGzDecoder::new(BufReader::new(file)))))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
    }
}

/// Parses sizes like `512MB`, `1g`, `64k`, `1000`.
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[digits.len()..];
    let n: f64 = digits.trim().parse().map_err(|_| format!("`{s}` is not a size (e.g. 512MB)"))?;
    let mult: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (use KB, MB or GB)")),
    };
    Ok((n * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MB"), Ok(512 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("lots").is_err());
    }
}
