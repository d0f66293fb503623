//! A client of etcd's v3 API through its JSON gateway (`POST /v3/kv/range`,
//! `/v3/kv/txn`, `/v3/lease/grant`, ...; keys and values as base64), which
//! every etcd 3.4 and later serves on its client port. The few calls the
//! cluster needs (leases, puts under a lease, create-if-absent, prefix reads)
//! go over hyper, already the server's HTTP stack, rather than through a gRPC
//! client whose build needs `protoc` and a second HTTP stack.
//!
//! Several endpoints (the members of one etcd cluster) are tried in turn: a
//! call fails only when none of them answers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use bytes::Bytes;
use serde_json::{json, Value};

/// How long one call to one endpoint may take before the next is tried.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug)]
pub struct EtcdError(pub String);

impl std::fmt::Display for EtcdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EtcdError {}

pub type Result<T> = std::result::Result<T, EtcdError>;

/// A lease's id, as etcd numbers it.
pub type LeaseId = i64;

/// A key and its value, with the revision that created it (the order of
/// creation across the whole store) and the one that last changed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Kv {
    pub key: String,
    pub value: Vec<u8>,
    pub create_revision: i64,
    pub mod_revision: i64,
    /// The lease the key was put under (0: none).
    pub lease: LeaseId,
}

#[derive(Debug)]
pub struct Etcd {
    /// `host:port` of each member's client URL.
    endpoints: Vec<String>,
    /// The endpoint that answered last, tried first: a member that is down
    /// (or cut off, which costs a timeout) is not tried before every call.
    last_good: AtomicUsize,
}

impl Etcd {
    /// A client of the members at `urls` (`http://host:port`, no TLS).
    pub fn new(urls: &[String]) -> Result<Etcd> {
        let endpoints = urls
            .iter()
            .map(|u| {
                let rest = u.strip_prefix("http://").unwrap_or(u).trim_end_matches('/');
                match rest.is_empty() || rest.contains('/') {
                    true => Err(EtcdError(format!("etcd endpoint `{u}`: expected http://HOST:PORT"))),
                    false => Ok(rest.to_string()),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        if endpoints.is_empty() {
            return Err(EtcdError("no etcd endpoint given".into()));
        }
        Ok(Etcd { endpoints, last_good: AtomicUsize::new(0) })
    }

    /// A lease that expires `ttl` after its last keep-alive.
    pub async fn grant(&self, ttl: Duration) -> Result<LeaseId> {
        let answer = self.call("/v3/lease/grant", json!({"TTL": ttl.as_secs().max(1)})).await?;
        number(&answer["ID"]).ok_or_else(|| EtcdError(format!("etcd granted no lease: {answer}")))
    }

    /// Renews `lease`; false when it has expired (or was revoked).
    pub async fn keep_alive(&self, lease: LeaseId) -> Result<bool> {
        let answer = self.call("/v3/lease/keepalive", json!({"ID": lease.to_string()})).await?;
        Ok(number(&answer["result"]["TTL"]).is_some_and(|ttl| ttl > 0))
    }

    /// Ends `lease` now, deleting the keys put under it.
    pub async fn revoke(&self, lease: LeaseId) -> Result<()> {
        match self.call("/v3/lease/revoke", json!({"ID": lease.to_string()})).await {
            Err(e) if e.0.contains("lease not found") => Ok(()),
            done => done.map(drop),
        }
    }

    /// Sets `key` to `value`, deleted with `lease` when given.
    pub async fn put(&self, key: &str, value: &[u8], lease: Option<LeaseId>) -> Result<()> {
        self.call("/v3/kv/put", put_request(key, value, lease)).await.map(drop)
    }

    /// Sets `key` to `value` (under `lease`, when given) if no key `key`
    /// exists; whether it did.
    pub async fn create(&self, key: &str, value: &[u8], lease: Option<LeaseId>) -> Result<bool> {
        let request = json!({
            "compare": [{"key": BASE64.encode(key), "target": "CREATE", "create_revision": "0"}],
            "success": [{"request_put": put_request(key, value, lease)}],
        });
        let answer = self.call("/v3/kv/txn", request).await?;
        Ok(answer["succeeded"].as_bool().unwrap_or(false))
    }

    /// Sets `key` to `value` if nothing changed it since revision
    /// `mod_revision` (a compare-and-swap); whether it did.
    pub async fn replace(&self, key: &str, value: &[u8], mod_revision: i64) -> Result<bool> {
        let request = json!({
            "compare": [{"key": BASE64.encode(key), "target": "MOD", "mod_revision": mod_revision.to_string()}],
            "success": [{"request_put": put_request(key, value, None)}],
        });
        let answer = self.call("/v3/kv/txn", request).await?;
        Ok(answer["succeeded"].as_bool().unwrap_or(false))
    }

    /// Deletes `key`; whether it was there.
    pub async fn delete(&self, key: &str) -> Result<bool> {
        let answer = self.call("/v3/kv/deleterange", json!({"key": BASE64.encode(key)})).await?;
        Ok(number(&answer["deleted"]).is_some_and(|n| n > 0))
    }

    /// The value of `key`.
    pub async fn get(&self, key: &str) -> Result<Option<Kv>> {
        let answer = self.call("/v3/kv/range", json!({"key": BASE64.encode(key)})).await?;
        Ok(kvs(&answer)?.into_iter().next())
    }

    /// Every key starting with `prefix`, in key order.
    pub async fn prefix(&self, prefix: &str) -> Result<Vec<Kv>> {
        let request = json!({"key": BASE64.encode(prefix), "range_end": BASE64.encode(prefix_end(prefix))});
        kvs(&self.call("/v3/kv/range", request).await?)
    }

    /// Posts `body` to `path` on the first endpoint that answers.
    async fn call(&self, path: &str, body: Value) -> Result<Value> {
        let body = Bytes::from(body.to_string());
        let mut failures = Vec::new();
        let first = self.last_good.load(Ordering::Relaxed);
        for i in (0..self.endpoints.len()).map(|k| (first + k) % self.endpoints.len()) {
            let endpoint = &self.endpoints[i];
            match tokio::time::timeout(CALL_TIMEOUT, post(endpoint, path, body.clone())).await {
                Ok(Ok((200, answer))) => {
                    self.last_good.store(i, Ordering::Relaxed);
                    return Ok(answer);
                }
                Ok(Ok((status, answer))) => {
                    // etcd's own refusal: another member would refuse it too.
                    let message =
                        answer["message"].as_str().map_or_else(|| answer.to_string(), str::to_string);
                    return Err(EtcdError(format!("etcd {path}: {status} {message}")));
                }
                Ok(Err(e)) => failures.push(format!("{endpoint}: {e}")),
                Err(_) => failures.push(format!("{endpoint}: no answer in {CALL_TIMEOUT:?}")),
            }
        }
        Err(EtcdError(format!("etcd {path}: no endpoint answered ({})", failures.join("; "))))
    }
}

/// One POST of JSON; its status and JSON answer.
async fn post(endpoint: &str, path: &str, body: Bytes) -> std::result::Result<(u16, Value), String> {
    let answer =
        crate::http::call(endpoint, "POST", path, &[("content-type", "application/json")], body).await?;
    let json = serde_json::from_slice(&answer.body).map_err(|e| format!("the answer is not JSON: {e}"))?;
    Ok((answer.status, json))
}

fn put_request(key: &str, value: &[u8], lease: Option<LeaseId>) -> Value {
    let mut put = json!({"key": BASE64.encode(key), "value": BASE64.encode(value)});
    if let Some(lease) = lease {
        put["lease"] = json!(lease.to_string());
    }
    put
}

/// The keys of a range answer, decoded.
fn kvs(answer: &Value) -> Result<Vec<Kv>> {
    let Some(list) = answer.get("kvs").and_then(Value::as_array) else { return Ok(Vec::new()) };
    list.iter()
        .map(|kv| {
            let bytes = |field: &str| BASE64.decode(kv[field].as_str().unwrap_or_default());
            let key = bytes("key").ok().and_then(|k| String::from_utf8(k).ok());
            let value = bytes("value").ok();
            match (key, value, number(&kv["create_revision"])) {
                (Some(key), Some(value), Some(create_revision)) => {
                    let lease = number(&kv["lease"]).unwrap_or(0);
                    let mod_revision = number(&kv["mod_revision"]).unwrap_or(create_revision);
                    Ok(Kv { key, value, create_revision, mod_revision, lease })
                }
                _ => Err(EtcdError(format!("etcd answered a malformed key: {kv}"))),
            }
        })
        .collect()
}

/// A 64-bit number, which the gateway writes as a string.
fn number(v: &Value) -> Option<i64> {
    v.as_str().and_then(|s| s.parse().ok()).or_else(|| v.as_i64())
}

/// The first key past every key starting with `prefix` (etcd's `range_end`).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_ends_past_its_last_byte() {
        assert_eq!(prefix_end("/needle/nodes/"), b"/needle/nodes0");
        assert_eq!(prefix_end("a"), b"b");
    }

    #[test]
    fn endpoints_are_host_and_port() {
        assert!(Etcd::new(&["http://127.0.0.1:2379".into(), "127.0.0.1:2380".into()]).is_ok());
        assert!(Etcd::new(&["http://127.0.0.1:2379/v3".into()]).is_err());
        assert!(Etcd::new(&[]).is_err());
    }

    #[test]
    fn range_answers_decode() {
        let answer = json!({"kvs": [{"key": BASE64.encode("/a"), "value": BASE64.encode("x"), "create_revision": "7", "lease": "12"}]});
        let want =
            Kv { key: "/a".into(), value: b"x".to_vec(), create_revision: 7, mod_revision: 7, lease: 12 };
        assert_eq!(kvs(&answer).unwrap(), vec![want]);
        assert!(kvs(&json!({"kvs": [{"key": "%%", "value": "", "create_revision": "1"}]})).is_err());
        assert!(kvs(&json!({"count": "0"})).unwrap().is_empty());
    }
}
