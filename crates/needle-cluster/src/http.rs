//! One HTTP/1.1 request to another process of the cluster (an etcd member,
//! another node), on a connection kept open for the next request to the same
//! process: a search passes through two or three requests to every shard's
//! node, and opening a connection for each cost more than the search itself.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// An answer: status, content type and body.
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
}

type Sender = SendRequest<Full<Bytes>>;

/// Idle connections by authority; at most [`IDLE_PER_AUTHORITY`] kept for each.
static IDLE: LazyLock<Mutex<HashMap<String, Vec<Sender>>>> = LazyLock::new(Default::default);
const IDLE_PER_AUTHORITY: usize = 64;

/// Sends `method path` (with its query) to `authority` (`host:port`), with
/// `headers` (such as the body's `content-type`); any failure is described in the error.
pub async fn call(
    authority: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Bytes,
) -> Result<Answer, String> {
    let mut request = hyper::Request::builder().method(method).uri(path).header("host", authority);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut request = request.body(Full::new(body)).map_err(|e| e.to_string())?;
    let (mut sender, response) = loop {
        let (mut sender, reused) = match idle(authority) {
            Some(sender) => (sender, true),
            None => (connect(authority).await?, false),
        };
        match sender.try_send_request(request).await {
            Ok(response) => break (sender, response),
            // An idle connection the other side closed: the request was not sent, so try another.
            Err(mut e) if reused => match e.take_message() {
                Some(unsent) => request = unsent,
                None => return Err(e.into_error().to_string()),
            },
            Err(e) => return Err(e.into_error().to_string()),
        }
    };
    let status = response.status().as_u16();
    let content_type =
        response.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_string);
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    if sender.ready().await.is_ok() {
        keep(authority, sender);
    }
    Ok(Answer { status, content_type, body })
}

/// An idle open connection to `authority`, if one is kept.
fn idle(authority: &str) -> Option<Sender> {
    let mut idle = IDLE.lock().expect("idle connections lock");
    let kept = idle.get_mut(authority)?;
    while let Some(sender) = kept.pop() {
        if !sender.is_closed() {
            return Some(sender);
        }
    }
    None
}

fn keep(authority: &str, sender: Sender) {
    let mut idle = IDLE.lock().expect("idle connections lock");
    let kept = idle.entry(authority.to_string()).or_default();
    if kept.len() < IDLE_PER_AUTHORITY {
        kept.push(sender);
    }
}

async fn connect(authority: &str) -> Result<Sender, String> {
    let stream = TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    Ok(sender)
}
