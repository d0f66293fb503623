//! The node and the cluster: `GET /`, `HEAD /`, `_cluster/health` (the `_cat` tables: `cat.rs`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::call::Call;
use crate::error::ApiResult;
use crate::respond;
use crate::server::{blocking, Shared};

/// The Elasticsearch version the answers follow.
pub const ES_VERSION: &str = "9.0.0";

pub async fn info(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || {
        call.params.finish(&call.path)?;
        Ok(respond::ok(&json!({
            "name": app.node_name,
            "cluster_name": app.cluster_name(),
            "cluster_uuid": app.cluster_uuid,
            "version": {
                "number": ES_VERSION,
                "build_flavor": "default",
                "build_type": "needle",
                "build_hash": env!("CARGO_PKG_VERSION"),
                "build_date": "2026-01-01T00:00:00.000Z",
                "build_snapshot": false,
                "lucene_version": "10.1.0",
                "minimum_wire_compatibility_version": "8.18.0",
                "minimum_index_compatibility_version": "8.0.0",
            },
            "tagline": "You Know, for Search",
        })))
    })
    .await
}

pub async fn ping() -> Response {
    respond::status(StatusCode::OK)
}

pub async fn health(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || health_answer(&app, None, &call)).await
}

pub async fn health_of(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || health_answer(&app, Some(&index), &call)).await
}

fn health_answer(app: &Shared, index: Option<&str>, call: &Call) -> ApiResult<Response> {
    call.params.ignore(&[
        "wait_for_status",
        "timeout",
        "master_timeout",
        "wait_for_no_relocating_shards",
        "wait_for_no_initializing_shards",
        "wait_for_active_shards",
        "wait_for_nodes",
        "wait_for_events",
        "local",
        "level",
        "expand_wildcards",
    ]);
    call.params.finish(&call.path)?;
    let shards = match index {
        Some(expr) => app.catalog.resolve(expr)?.len(),
        None => app.catalog.names().len(),
    };
    let nodes = app.member.as_ref().map_or(1, |m| m.view().nodes.len());
    Ok(respond::ok(&json!({
        "cluster_name": app.cluster_name(),
        "status": "green",
        "timed_out": false,
        "number_of_nodes": nodes,
        "number_of_data_nodes": nodes,
        "active_primary_shards": shards,
        "active_shards": shards,
        "relocating_shards": 0,
        "initializing_shards": 0,
        "unassigned_shards": 0,
        "unassigned_primary_shards": 0,
        "delayed_unassigned_shards": 0,
        "number_of_pending_tasks": 0,
        "number_of_in_flight_fetch": 0,
        "task_max_waiting_in_queue_millis": 0,
        "active_shards_percent_as_number": 100.0,
    })))
}
