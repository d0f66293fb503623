//! S3 and S3-compatible stores (MinIO, Ceph, moto) as the segment store:
//! `--store s3://BUCKET[/PREFIX]`. The credentials, region and endpoint
//! come from the usual AWS environment variables, read by `object_store`:
//! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`, `AWS_ENDPOINT` (another store than Amazon's), and
//! `AWS_ALLOW_HTTP=true` for an endpoint without TLS.
//!
//! `object_store` signs each request (with ring); the request goes over
//! hyper, the HTTP stack the server already runs, through rustls for
//! `https`, rather than over a second HTTP client.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector as Tcp;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{
    ClientConfigKey, ClientOptions, HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest,
    HttpRequestBody, HttpResponse, HttpResponseBody, HttpService,
};
use object_store::prefix::PrefixStore;
use object_store::ObjectStore;

/// Connecting gives up after this; `object_store` retries.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A request whose answer has not begun after this fails; `object_store` retries.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The store at `url` (`s3://BUCKET[/PREFIX]`), or why it cannot be used.
pub fn open(url: &str) -> Result<Arc<dyn ObjectStore>, String> {
    let rest = url.strip_prefix("s3://").ok_or_else(|| format!("[{url}] is not an s3:// URL"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(format!("[{url}] names no bucket (s3://BUCKET[/PREFIX])"));
    }
    let builder = AmazonS3Builder::from_env();
    let endpoint = builder.get_config_value(&AmazonS3ConfigKey::Endpoint).unwrap_or_default();
    let allow_http = builder.get_config_value(&AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp));
    if endpoint.starts_with("http://") && allow_http.as_deref() != Some("true") {
        return Err(format!(
            "[{url}]: endpoint {endpoint} is not TLS; set AWS_ALLOW_HTTP=true to use it anyway"
        ));
    }
    let s3 = builder
        .with_bucket_name(bucket)
        .with_http_connector(Hyper)
        .build()
        .map_err(|e| format!("[{url}]: {e}"))?;
    Ok(match prefix.trim_matches('/') {
        "" => Arc::new(s3),
        prefix => Arc::new(PrefixStore::new(s3, prefix)),
    })
}

/// Makes `object_store`'s HTTP client: hyper's pooled client, TLS by rustls.
#[derive(Debug)]
struct Hyper;

impl HttpConnector for Hyper {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let mut tcp = Tcp::new();
        tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
        tcp.set_nodelay(true);
        tcp.enforce_http(false);
        let tls = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls_config());
        let allow_http = options.get_config_value(&ClientConfigKey::AllowHttp).is_some_and(|v| v == "true");
        let connector = match allow_http {
            true => tls.https_or_http().enable_http1().wrap_connector(tcp),
            false => tls.https_only().enable_http1().wrap_connector(tcp),
        };
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(HttpClient::new(Service { client }))
    }
}

/// TLS trusting the system's root certificates, those it can read: with
/// none (a machine without them), `https` fails at its handshake, naming the
/// certificate, and plain `http` still works where it is allowed.
fn tls_config() -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth()
}

#[derive(Debug)]
struct Service {
    client: Client<HttpsConnector<Tcp>, HttpRequestBody>,
}

#[async_trait::async_trait]
impl HttpService for Service {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let answer = tokio::time::timeout(ANSWER_TIMEOUT, self.client.request(request))
            .await
            .map_err(|e| HttpError::new(HttpErrorKind::Timeout, e))?
            .map_err(|e| {
                let kind = if e.is_connect() { HttpErrorKind::Connect } else { HttpErrorKind::Request };
                // hyper's own message is "client error (Connect)": the cause (refused, a certificate) is below it.
                HttpError::new(kind, std::io::Error::other(with_causes(&e)))
            })?;
        let (parts, body) = answer.into_parts();
        // A body cut short is retried when the request may be repeated.
        let body = body.map_err(|e| HttpError::new(HttpErrorKind::Interrupted, e));
        Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(body)))
    }
}

/// `e`'s message followed by its causes'.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        message.push_str(&format!(": {c}"));
        cause = c.source();
    }
    message
}
