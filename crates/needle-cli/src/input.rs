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
