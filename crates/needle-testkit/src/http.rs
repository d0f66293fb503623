//! A plain HTTP/1.1 client for tests of the server: one connection per
//! request (`connection: close`), the answer read whole (chunked or not).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use serde_json::Value;

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
}

pub fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    headers: &[(&str, &str)],
) -> Reply {
    try_send(addr, method, path, body, headers)
        .unwrap_or_else(|e| panic!("{method} {path}: no answer from {addr}: {e}"))
}

/// [`send`], with a refused connection or a cut-off answer as an error
/// (a server killed mid-request).
pub fn try_send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    headers: &[(&str, &str)],
) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(addr)?;
    let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) && body.is_some() {
        request.push_str("content-type: application/json\r\n");
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n", body.map_or(0, <[u8]>::len)));
    stream.write_all(request.as_bytes())?;
    if let Some(b) = body {
        // The server may answer (413) and close before reading a large body whole.
        let _ = stream.write_all(b);
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_reply(&raw, method == "HEAD")
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the answer was cut off"))
}

fn parse_reply(raw: &[u8], head: bool) -> Option<Reply> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head_text = std::str::from_utf8(&raw[..split]).ok()?;
    let mut lines = head_text.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &raw[split + 4..];
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let body = if head {
        Vec::new()
    } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        dechunk(rest)?
    } else {
        let length = header("content-length").and_then(|v| v.parse::<usize>().ok()).unwrap_or(rest.len());
        rest.get(..length)?.to_vec()
    };
    Some(Reply { status, headers, body })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..eol]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}
