//! The node and the cluster: `GET /`, `HEAD /`, `_cluster/health` (the `_cat` tables: `cat.rs`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::call::Call;
use crate::coordinator::cat::{state_of, CopyState, Serving};
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

/// Health statuses, best first.
const STATUSES: [&str; 3] = ["green", "yellow", "red"];

/// `_cluster/health`: with `wait_for_status`, answered once the status is
/// that or better, or when `timeout` (30 s by default) runs out: then a 408
/// with `timed_out`, as Elasticsearch answers.
fn health_answer(app: &Shared, index: Option<&str>, call: &Call) -> ApiResult<Response> {
    let p = &call.params;
    let wanted = match p.get("wait_for_status") {
        Some(s) => Some(STATUSES.iter().position(|x| *x == s).ok_or_else(|| {
            crate::error::ApiError::illegal_argument(format!("unknown cluster health status [{s}]"))
        })?),
        None => None,
    };
    let timeout = p.get("timeout").map(|t| crate::params::time_value("timeout", t)).transpose()?;
    let deadline = std::time::Instant::now() + timeout.unwrap_or(std::time::Duration::from_secs(30));
    call.params.ignore(&[
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
    loop {
        let (copies, status) = health_now(app, index)?;
        let met = wanted.is_none_or(|w| status <= w);
        if met || std::time::Instant::now() >= deadline {
            let answer = health_json(app, &copies, STATUSES[status], !met);
            let code = if met { StatusCode::OK } else { StatusCode::REQUEST_TIMEOUT };
            return Ok(respond::json(code, &answer));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The whole cluster's health now, as `GET /_cluster/health` answers it (for `_cat/health`).
pub(crate) fn health_now_json(app: &Shared) -> ApiResult<serde_json::Value> {
    let (copies, status) = health_now(app, None)?;
    Ok(health_json(app, &copies, STATUSES[status], false))
}

/// The copies of what is asked about, and the status they make (a place in [`STATUSES`]).
fn health_now(app: &Shared, index: Option<&str>) -> ApiResult<(Copies, usize)> {
    let copies = match &app.member {
        Some(member) => {
            let serving = tokio::runtime::Handle::current()
                .block_on(crate::coordinator::cat::serving(member, app.api_key.as_deref()));
            cluster_copies(app, &member.view(), &serving, index)?
        }
        None => {
            let local = match index {
                Some(expr) => app.catalog.resolve(expr)?.len(),
                None => app.catalog.names().len(),
            };
            Copies { primaries: local, active: local, ..Copies::default() }
        }
    };
    let status = match copies {
        Copies { unassigned_primaries: 1.., .. } | Copies { initializing_primaries: 1.., .. } => 2,
        Copies { unassigned: 1.., .. } | Copies { initializing: 1.., .. } => 1,
        _ => 0,
    };
    Ok((copies, status))
}

fn health_json(app: &Shared, copies: &Copies, status: &str, timed_out: bool) -> serde_json::Value {
    let nodes = app.member.as_ref().map_or(1, |m| m.view().nodes.len());
    let all = copies.active + copies.initializing + copies.unassigned;
    let percent = if all == 0 { 100.0 } else { 100.0 * copies.active as f64 / all as f64 };
    json!({
        "cluster_name": app.cluster_name(),
        "status": status,
        "timed_out": timed_out,
        "number_of_nodes": nodes,
        "number_of_data_nodes": nodes,
        "active_primary_shards": copies.primaries,
        "active_shards": copies.active,
        "relocating_shards": 0,
        "initializing_shards": copies.initializing,
        "unassigned_shards": copies.unassigned,
        "unassigned_primary_shards": copies.unassigned_primaries,
        "delayed_unassigned_shards": 0,
        "number_of_pending_tasks": 0,
        "number_of_in_flight_fetch": 0,
        "task_max_waiting_in_queue_millis": 0,
        "active_shards_percent_as_number": percent,
    })
}

/// Shard copies by state.
#[derive(Debug, Default, PartialEq, Eq)]
struct Copies {
    primaries: usize,
    active: usize,
    /// Placed on a live node that does not serve it yet (being made there).
    initializing: usize,
    initializing_primaries: usize,
    unassigned: usize,
    unassigned_primaries: usize,
}

impl Copies {
    /// Counts a copy in `state`.
    fn add(&mut self, state: CopyState, primary: bool) {
        let count = |all: &mut usize, primaries: &mut usize| {
            *all += 1;
            *primaries += usize::from(primary);
        };
        match state {
            CopyState::Started => count(&mut self.active, &mut self.primaries),
            CopyState::Initializing => count(&mut self.initializing, &mut self.initializing_primaries),
            CopyState::Unassigned => count(&mut self.unassigned, &mut self.unassigned_primaries),
        }
    }
}

/// The copies of the cluster's indexes `expression` names (all when none):
/// a copy is started while its node serves it (`held`), initializing while
/// a live node it is placed on does not yet, unassigned while its node is
/// gone or no node is given a replica the index wants. The node's own
/// indexes that are no cluster index's shards count as active primaries.
fn cluster_copies(
    app: &Shared,
    view: &needle_cluster::View,
    serving: &Serving,
    expression: Option<&str>,
) -> ApiResult<Copies> {
    let expression = expression.filter(|e| *e != "_all");
    let named =
        |name: &str| expression.is_none_or(|e| e.split(',').any(|p| crate::pattern::matches(p, name)));
    let mut copies = count_copies(view, serving, named);
    let own = app.catalog.names().into_iter().filter(|n| !needle_cluster::indices::is_shard_name(n));
    let own = own.filter(|n| named(n)).count();
    (copies.primaries, copies.active) = (copies.primaries + own, copies.active + own);
    let concrete = expression.is_some_and(|e| !e.contains(['*', ',']) && e != "_all");
    if concrete && copies.active + copies.initializing + copies.unassigned == 0 {
        return Err(crate::error::ApiError::index_not_found(expression.unwrap_or_default()));
    }
    Ok(copies)
}

/// The copies of the cluster's indexes `named` picks, by state.
fn count_copies(view: &needle_cluster::View, serving: &Serving, named: impl Fn(&str) -> bool) -> Copies {
    let mut copies = Copies::default();
    for (name, sharded) in view.indices.iter().filter(|(name, _)| named(name)) {
        for k in 0..sharded.shards.len() {
            let shard = needle_cluster::shard_name(name, k);
            copies.add(state_of(serving, &shard, Some(&sharded.shards[k])), true);
            let placed = sharded.replicas_of(k);
            for r in 0..sharded.replicas_wanted().max(placed.len()) {
                copies.add(state_of(serving, &shard, placed.get(r)), false);
            }
        }
    }
    copies
}

#[cfg(test)]
mod tests {
    use super::*;
    use needle_cluster::{NodeInfo, ShardedIndex, View};

    #[test]
    fn copies_count_as_their_nodes_serve_them() {
        let node = |id: &str| NodeInfo {
            id: id.into(),
            name: id.into(),
            address: format!("{id}:9200"),
            host: String::new(),
            figures: Default::default(),
        };
        let logs = ShardedIndex {
            shards: vec!["n1".into(), "n3".into()],
            replicas: vec![vec!["n2".into()], vec![]],
            created: json!({"settings": {"number_of_replicas": 1}}),
            aliases: Default::default(),
        };
        let view = View {
            nodes: vec![node("n1"), node("n2")],
            manager: None,
            indices: [("logs".into(), logs)].into(),
        };
        // Shard 0's primary served; its replica placed on live n2, not served yet;
        // shard 1's primary on n3, gone, and its replica given no node.
        let mut serving = Serving::default();
        serving.told("n1", ["logs.shard-0".to_string()]);
        serving.told("n2", []);
        let copies = count_copies(&view, &serving, |_| true);
        let want = Copies {
            primaries: 1,
            active: 1,
            initializing: 1,
            unassigned: 2,
            unassigned_primaries: 1,
            ..Copies::default()
        };
        assert_eq!(copies, want);
        // Once n2 serves its replica and n1 is given shard 1 but has not made it yet.
        let mut view = view;
        view.indices.get_mut("logs").unwrap().shards[1] = "n1".into();
        let mut serving = Serving::default();
        serving.told("n1", ["logs.shard-0".to_string()]);
        serving.told("n2", ["logs.shard-0".to_string()]);
        let copies = count_copies(&view, &serving, |_| true);
        let want = Copies {
            primaries: 1,
            active: 2,
            initializing: 1,
            initializing_primaries: 1,
            unassigned: 1,
            ..Copies::default()
        };
        assert_eq!(copies, want);
    }
}
