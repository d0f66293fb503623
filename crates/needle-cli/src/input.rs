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

/// The lines of `input` with their numbers (from 1), ends cut, each at most
/// `max` bytes: a longer one, or one not UTF-8, is an error naming its line
/// and ends the lines, and no more than `max` bytes of it are held (`lines()`
/// would read it whole).
pub fn bounded_lines(
    input: &mut dyn BufRead,
    max: usize,
) -> impl Iterator<Item = Result<(u64, String)>> + '_ {
    let mut line_no = 0u64;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        line_no += 1;
        let mut buf = Vec::new();
        let line = match needle_engine::read_line_within(input, max, &mut buf) {
            Ok((0, _)) => return None,
            Ok((_, true)) => Err(Error::invalid(format!("longer than the {max} bytes a line may take"))),
            Ok(_) => {
                let end = buf.len() - usize::from(buf.ends_with(b"\n")) - usize::from(buf.ends_with(b"\r\n"));
                buf.truncate(end);
                String::from_utf8(buf).map_err(|_| Error::invalid("not UTF-8"))
            }
            Err(e) => Err(Error::io("<input>", e)),
        };
        failed = line.is_err();
        Some(line.map(|l| (line_no, l)).map_err(|e| e.at_line(line_no)))
    })
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

    /// Lines come back numbered without their ends; one longer than the limit
    /// is an error naming it, and nothing is read after it.
    #[test]
    fn bounded_lines_refuse_a_long_line_by_its_number() {
        let text = b"one\r\ntwo\n\nthree is long\nfour\n";
        let mut input = io::Cursor::new(&text[..]);
        let lines: Vec<_> = bounded_lines(&mut input, 8).collect();
        let ok: Vec<_> = lines[..3].iter().map(|l| l.as_ref().unwrap().clone()).collect();
        assert_eq!(ok, [(1, "one".to_string()), (2, "two".into()), (3, String::new())]);
        let error = lines[3].as_ref().unwrap_err().to_string();
        assert!(error.contains("line 4") && error.contains("8 bytes"), "{error}");
        assert_eq!(lines.len(), 4);
        let mut input = io::Cursor::new(&b"last line without an end"[..]);
        let all: Vec<_> = bounded_lines(&mut input, 100).map(Result::unwrap).collect();
        assert_eq!(all, [(1, "last line without an end".to_string())]);
    }
}
