//! A server on a free loopback port over a temporary data folder, spoken
//! to with the test kit's HTTP client.

use std::net::SocketAddr;
use std::path::Path;
use std::thread::JoinHandle;

use needle_server::{Server, ServerConfig};
pub use needle_testkit::http::{send, Reply};
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

    /// A server with the bundled corpus loaded (as `needle serve --demo`).
    pub fn start_demo() -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let mut s = TestServer::start_prepared(
            |c| c,
            dir.path(),
            |server| {
                assert_eq!(needle_server::load_demo(server).unwrap(), 233);
            },
        );
        s._dir = Some(dir);
        s
    }

    /// A server over `data` with the configuration `tweak` makes.
    pub fn start_with(tweak: impl FnOnce(ServerConfig) -> ServerConfig, data: &Path) -> TestServer {
        TestServer::start_prepared(tweak, data, |_| {})
    }

    /// [`TestServer::start_with`], `prepare` run on the server before it serves.
    fn start_prepared(
        tweak: impl FnOnce(ServerConfig) -> ServerConfig,
        data: &Path,
        prepare: impl FnOnce(&Server),
    ) -> TestServer {
        let config = tweak(ServerConfig::new(data.to_path_buf(), "127.0.0.1:0".parse().unwrap()));
        let server = Server::bind(config).unwrap();
        prepare(&server);
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

    /// Creates `index` with `mapping` and sends it the bundled State of the
    /// Union corpus with `_bulk`, 50 documents a request, each under its `id`.
    pub fn load_sotu(&self, index: &str, mapping: Value) {
        self.load_sotu_share(index, mapping, (0, 1));
    }

    /// [`TestServer::load_sotu`] of the documents on lines `i` with `i % n == k`, for `(k, n)`.
    pub fn load_sotu_share(&self, index: &str, mapping: Value, (k, n): (usize, usize)) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let (status, answer) =
            self.json("PUT", &format!("/{index}"), Some(serde_json::json!({"mappings": mapping})));
        assert_eq!(status, 200, "{answer}");
        let file = std::fs::File::open(root.join("examples/data/sotu.jsonl.gz")).unwrap();
        let docs: Vec<Value> =
            std::io::BufRead::lines(std::io::BufReader::new(flate2::read::GzDecoder::new(file)))
                .skip(k)
                .step_by(n)
                .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
                .collect();
        for batch in docs.chunks(50) {
            let mut lines = Vec::new();
            for d in batch {
                lines.push(serde_json::json!({"index": {"_index": index, "_id": d["id"]}}));
                lines.push(d.clone());
            }
            let (status, answer) = self.bulk("/_bulk", &lines);
            assert_eq!((status, &answer["errors"]), (200, &Value::Bool(false)));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}
