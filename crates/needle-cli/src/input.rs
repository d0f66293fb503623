//! Opening an input: a file (gzip-compressed when it starts with the gzip
//! magic) or stdin. The input is opened once and its first bytes are looked
//! at through the read buffer, so a pipe, a FIFO or `<(...)` works as well as
//! a file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use flate2::bufread::MultiGzDecoder;
use needle_core::{Error, Result};

const BUFFER: usize = 1 << 20;

pub fn open(path: &str) -> Result<Box<dyn BufRead + Send>> {
    let mut source: Box<dyn Read + Send> = match path {
        "-" => Box::new(io::stdin()),
        _ => Box::new(File::open(path).map_err(|e| Error::io(path, e))?),
    };
    let name = if path == "-" { "<stdin>" } else { path };
    // The first two bytes, read once (a pipe may deliver them one at a time)
    // and put back in front of the rest.
    let mut magic = Vec::with_capacity(2);
    (&mut source).take(2).read_to_end(&mut magic).map_err(|e| Error::io(name, e))?;
    let gzip = magic == [0x1f, 0x8b];
    let whole = BufReader::with_capacity(BUFFER, io::Cursor::new(magic).chain(source));
    if gzip {
        return Ok(Box::new(BufReader::with_capacity(BUFFER, MultiGzDecoder::new(whole))));
    }
    Ok(Box::new(whole))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn plain_and_gzip_files_read_the_same() {
        let tmp = tempfile::tempdir().unwrap();
        let plain = tmp.path().join("a.jsonl");
        std::fs::write(&plain, "{\"id\":1}\n").unwrap();
        let gz = tmp.path().join("a.jsonl.gz");
        let mut enc = flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        enc.write_all(b"{\"id\":1}\n").unwrap();
        enc.finish().unwrap();
        for p in [&plain, &gz] {
            let mut s = String::new();
            open(p.to_str().unwrap()).unwrap().read_to_string(&mut s).unwrap();
            assert_eq!(s, "{\"id\":1}\n");
        }
    }

    #[test]
    fn a_fifo_is_read_once_from_its_first_byte() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let path = fifo.clone();
        let writer = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            f.write_all(b"{\"id\":\"first\"}\n{\"id\":\"second\"}\n").unwrap();
        });
        let mut s = String::new();
        open(fifo.to_str().unwrap()).unwrap().read_to_string(&mut s).unwrap();
        writer.join().unwrap();
        assert_eq!(s, "{\"id\":\"first\"}\n{\"id\":\"second\"}\n");
    }
}
