//! A server on a free loopback port over a temporary data folder, and a
//! plain HTTP/1.1 client (one connection per request) to talk to it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::thread::JoinHandle;

use needle_server::{Server, ServerConfig};
use serde_json::Value;

pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl TestServer {
    pub fn start() -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let mut s = TestServer::start_with(|c| c, dir.path());
        s._dir = Some(dir);
        s
    }

    /// A server over `data` with the configuration `tweak` makes.
    pub fn start_with(tweak: impl FnOnce(ServerConfig) -> ServerConfig, data: &Path) -> TestServer {
        let config = tweak(ServerConfig::new(data.to_path_buf(), "127.0.0.1:0".parse().unwrap()));
        let server = Server::bind(config).unwrap();
        let addr = server.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            server
                .serve_until(async move {
                    let _ = stopped.await;
                })
                .unwrap()
        });
        TestServer { addr, stop: Some(stop), thread: Some(thread), _dir: None }
    }

    /// Stops serving (as SIGTERM does: indexes persisted) and waits for it.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }

    pub fn call(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        self.call_with(method, path, body, &[])
    }

    pub fn call_with(&self, method: &str, path: &str, body: Option<&str>, headers: &[(&str, &str)]) -> Reply {
        send(self.addr, method, path, body.map(str::as_bytes), headers)
    }

    /// A request whose answer is JSON: (status, body).
    pub fn json(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let text = body.map(|b| b.to_string());
        let reply = self.call(method, path, text.as_deref());
        (reply.status, reply.json())
    }

    /// A `_bulk` request of NDJSON lines.
    pub fn bulk(&self, path: &str, lines: &[Value]) -> (u16, Value) {
        let mut body = String::new();
        for l in lines {
            body.push_str(&l.to_string());
            body.push('\n');
        }
        let reply = self.call_with("POST", path, Some(&body), &[("content-type", "application/x-ndjson")]);
        (reply.status, reply.json())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

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
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) && body.is_some() {
        request.push_str("content-type: application/json\r\n");
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n", body.map_or(0, <[u8]>::len)));
    stream.write_all(request.as_bytes()).unwrap();
    if let Some(b) = body {
        // The server may answer (413) and close before reading a large body whole.
        let _ = stream.write_all(b);
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_reply(&raw, method == "HEAD")
}

fn parse_reply(raw: &[u8], head: bool) -> Reply {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete HTTP head");
    let head_text = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head_text.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &raw[split + 4..];
    let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if head {
        Vec::new()
    } else if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Reply { status, headers, body }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = rest.windows(2).position(|w| w == b"\r\n").expect("a chunk size line");
        let size_text = std::str::from_utf8(&rest[..eol]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        rest = &rest[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}
