//! One HTTP/1.1 request to another process of the cluster (an etcd member,
//! another node), on a connection of its own: loopback and LAN connections
//! are cheap next to what the cluster's calls do.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// An answer: status, content type and body.
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
}

/// Sends `method path` (with its query) to `authority` (`host:port`), with
/// `headers` (such as the body's `content-type`); any failure is described in the error.
pub async fn call(
    authority: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Bytes,
) -> Result<Answer, String> {
    let stream = TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (mut send, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let mut request = hyper::Request::builder().method(method).uri(path).header("host", authority);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(body)).map_err(|e| e.to_string())?;
    let response = send.send_request(request).await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let content_type =
        response.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_string);
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok(Answer { status, content_type, body })
}
