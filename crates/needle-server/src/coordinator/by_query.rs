//! `_delete_by_query` over a cluster's indexes: every shard deletes what
//! the query matches among its documents (each delete logged as any write
//! of the shard is), and the answer sums theirs. A shard that could not be
//! reached is listed under `failures`, and the answer takes its status, as
//! Elasticsearch answers a delete by query that met failures.

use std::time::Instant;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::search::to_every_shard;
use super::{Forward, Part};
use crate::error::{ApiError, ApiResult};
use crate::respond;

/// The figures of a shard's answer that add up over shards.
const SUMMED: [&str; 5] = ["total", "deleted", "batches", "version_conflicts", "noops"];

pub async fn delete_by_query(call: &Forward, parts: &[Part]) -> ApiResult<Response> {
    let started = Instant::now();
    if call.url_query.split('&').any(|p| p.starts_with("max_docs=")) {
        // Each shard would delete up to the bound: their sum could pass it.
        return Err(ApiError::illegal_argument(format!(
            "[max_docs] not supported yet in a delete by query of [{}], whose shards are on the cluster's nodes",
            call.index
        )));
    }
    let mut sums = [0u64; SUMMED.len()];
    let mut failures = Vec::new();
    let body = call.body.clone();
    for (k, answer) in
        to_every_shard(call, parts, "_delete_by_query", &call.query, &|_| Some(body.clone())).await
    {
        match answer {
            Ok(answer) => {
                let answer = answer.unwrap_or_default();
                for (sum, key) in sums.iter_mut().zip(SUMMED) {
                    *sum += answer[key].as_u64().unwrap_or(0);
                }
                failures.extend(answer["failures"].as_array().into_iter().flatten().cloned());
            }
            // A request the shards refuse is refused by every one of them alike.
            Err(e) if e.status.is_client_error() => return Err(e),
            Err(e) => failures.push(parts[k].failure(&e)),
        }
    }
    let mut answer = json!({"took": started.elapsed().as_millis() as u64, "timed_out": false});
    for (sum, key) in sums.into_iter().zip(SUMMED) {
        answer[key] = json!(sum);
    }
    answer["retries"] = json!({"bulk": 0, "search": 0});
    answer["throttled_millis"] = json!(0);
    answer["requests_per_second"] = json!(-1.0);
    answer["throttled_until_millis"] = json!(0);
    let status = failures
        .iter()
        .filter_map(|f| f["status"].as_u64())
        .max()
        .and_then(|s| StatusCode::from_u16(s as u16).ok())
        .unwrap_or(StatusCode::OK);
    answer["failures"] = Value::Array(failures);
    Ok(respond::json(status, &answer))
}
