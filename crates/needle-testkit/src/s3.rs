//! An S3 emulator (moto's server, `pip install 'moto[server]'`) on a free
//! loopback port with one bucket, for tests of the segment store on S3;
//! stopped when dropped. It takes any credentials, and checks no signature:
//! the requests made here name the store's key id, unsigned.

use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::etcd::{free_port, installed};
use crate::http::send;

/// Requests as the owner of what the store wrote (anonymous ones are refused).
const AS_THE_STORE: (&str, &str) = (
    "authorization",
    "AWS4-HMAC-SHA256 Credential=needle/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0",
);

pub struct S3Process {
    child: Child,
    addr: SocketAddr,
    pub bucket: String,
}

impl S3Process {
    /// Starts `moto_server` from the PATH and makes bucket `bucket`. `None`
    /// when it is not installed and the run is not CI's (CI installs it:
    /// there a missing emulator fails the test).
    pub fn start(name: &str, bucket: &str) -> Option<S3Process> {
        if !installed("moto_server", "pip install 'moto[server]'", name) {
            return None;
        }
        let port = free_port();
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts");
        let s3 = S3Process { child, addr: ([127, 0, 0, 1], port).into(), bucket: bucket.to_string() };
        let started = Instant::now();
        while TcpStream::connect(s3.addr).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "moto_server did not listen in 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        let made = send(s3.addr, "PUT", &format!("/{bucket}"), None, &[AS_THE_STORE]);
        assert_eq!(made.status, 200, "bucket {bucket}: {}", made.text());
        Some(s3)
    }

    /// The store's URL for keys under `prefix`.
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.bucket)
    }

    /// The environment that points an S3 client here.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", format!("http://{}", self.addr)),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "needle".into()),
            ("AWS_SECRET_ACCESS_KEY", "needle".into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    /// Every key in the bucket (the first thousand).
    pub fn keys(&self) -> Vec<String> {
        let listed =
            send(self.addr, "GET", &format!("/{}?list-type=2", self.bucket), None, &[AS_THE_STORE]).text();
        listed
            .split("<Key>")
            .skip(1)
            .filter_map(|k| k.split_once("</Key>"))
            .map(|(k, _)| k.to_string())
            .collect()
    }

    /// The object at `key`.
    pub fn get(&self, key: &str) -> Vec<u8> {
        send(self.addr, "GET", &format!("/{}/{key}", self.bucket), None, &[AS_THE_STORE]).body
    }

    /// Overwrites the object at `key` (damage, for a test).
    pub fn put(&self, key: &str, body: &[u8]) {
        let put = send(self.addr, "PUT", &format!("/{}/{key}", self.bucket), Some(body), &[AS_THE_STORE]);
        assert_eq!(put.status, 200, "{key}: {}", put.text());
    }
}

impl Drop for S3Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
