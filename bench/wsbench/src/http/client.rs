//! One keep-alive HTTP/1.1 connection to a search server (hyper's client), shared
//! by the benchmarks that drive a server over loopback: the query bridge and `_bulk`
//! ingest. A connection carries one request at a time; callers keep a pool of them.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::util::Result;

/// A server's address from `http://HOST:PORT` (no path, no TLS).
#[derive(Debug, Clone)]
pub struct Server {
    pub authority: String,
}

impl Server {
    pub fn parse(url: &str) -> Result<Server> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("`{url}`: only http://HOST:PORT is supported"))?;
        let authority = rest.trim_end_matches('/');
        if authority.is_empty() || authority.contains('/') {
            return Err(format!("`{url}`: expected http://HOST:PORT with no path").into());
        }
        Ok(Server { authority: authority.to_string() })
    }
}

/// A response: status and body.
pub struct Reply {
    pub status: u16,
    pub body: Bytes,
}

pub struct Conn {
    send: SendRequest<Full<Bytes>>,
    host: String,
}

impl Conn {
    pub async fn open(server: &Server) -> Result<Conn> {
        let stream = TcpStream::connect(&server.authority)
            .await
            .map_err(|e| format!("connecting to {}: {e}", server.authority))?;
        stream.set_nodelay(true)?;
        let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        // The connection's I/O runs as its own task until either side closes it.
        tokio::spawn(connection);
        Ok(Conn { send, host: server.authority.clone() })
    }

    /// Sends one request and reads the whole response.
    pub async fn call(&mut self, method: &str, path: &str, content_type: &str, body: Bytes) -> Result<Reply> {
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host)
            .header("content-type", content_type)
            .body(Full::new(body))?;
        self.send.ready().await?;
        let response = self.send.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        Ok(Reply { status, body })
    }

    /// `call` with a JSON body (or none), failing on any status but 2xx.
    pub async fn json(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<serde_json::Value> {
        let bytes = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
        let reply = self.call(method, path, "application/json", bytes).await?;
        let value: serde_json::Value = serde_json::from_slice(&reply.body)
            .map_err(|e| format!("{method} {path}: the answer is not JSON ({e})"))?;
        if !(200..300).contains(&reply.status) {
            return Err(format!("{method} {path}: {} {value}", reply.status).into());
        }
        Ok(value)
    }
}

/// A single-threaded tokio runtime: the client side of a loopback benchmark
/// should take as little of the machine as it can.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}
