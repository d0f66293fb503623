//! `_msearch` on a cluster's node: each search of the request is answered
//! as `_search` over the cluster's indexes its header names (`search.rs`),
//! all of them at once; one that fails fails alone, under `responses`.

use std::time::Instant;

use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;

use super::{forwarded_query, Forward};
use crate::error::{ApiError, ApiResult};
use crate::params::Params;
use crate::respond;
use crate::routes::msearch::{answer, answered, header_of, searches, Options};

pub async fn msearch(call: &Forward, default_index: Option<&str>) -> ApiResult<Response> {
    let started = Instant::now();
    let params = Params::parse(Some(&call.url_query))?;
    let path = match default_index {
        Some(index) => format!("/{index}/_msearch"),
        None => "/_msearch".to_string(),
    };
    let options = Options::read(&params, &path)?;
    let text = std::str::from_utf8(&call.body)
        .map_err(|e| ApiError::parsing(format!("the request body is not UTF-8: {e}")))?;
    let each =
        searches(text)?.into_iter().map(|(header, body)| one(call, default_index, header, body, options));
    let responses: Vec<Value> = futures_util::future::join_all(each).await;
    Ok(respond::ok(&answer(started, responses)))
}

/// One search's entry under `responses`.
async fn one(
    call: &Forward,
    default_index: Option<&str>,
    header: &str,
    body: &str,
    options: Options,
) -> Value {
    let searched = async {
        let (expression, dfs) = header_of(default_index, header, options.dfs)?;
        let mut url_query = Vec::new();
        if dfs {
            url_query.push("search_type=dfs_query_then_fetch");
        }
        if options.total_as_int {
            url_query.push("rest_total_hits_as_int=true");
        }
        let search = call.search_of(expression, url_query.join("&"), Bytes::copy_from_slice(body.as_bytes()));
        let parts = search.resolve().await?;
        super::search::search_answer(&search, &parts).await
    };
    answered(searched.await)
}

impl Forward {
    /// A search of `expression` with `url_query` and `body` from the same caller.
    fn search_of(&self, expression: String, url_query: String, body: Bytes) -> Forward {
        Forward {
            app: self.app.clone(),
            member: self.member.clone(),
            api_key: self.api_key.clone(),
            logged: self.logged,
            index: expression,
            rest: "_search".into(),
            method: "POST".into(),
            query: forwarded_query(Some(&url_query)),
            url_query,
            content_type: Some("application/json".into()),
            body,
        }
    }
}
