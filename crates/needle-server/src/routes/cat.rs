//! The `_cat` tables: `_cat/indices`, `_cat/aliases`, `_cat/shards`
//! (Needle keeps one shard an index, on this node) and `_cat/nodes` (this
//! node), as text (`v`, `h`, `s`, `bytes`) or `format=json`.

use std::net::SocketAddr;

use axum::extract::{Path, State};
use axum::response::Response;
use needle_cluster::NodeInfo;
use serde_json::{Map, Value};

use crate::alias_options::AliasOptions;
use crate::call::Call;
use crate::catalog::Handle;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::server::{blocking, Shared};

pub async fn cat_indices(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || cat(&app, "*", &call)).await
}

pub async fn cat_indices_of(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || cat(&app, &index, &call)).await
}

pub(crate) const CAT_COLUMNS: [&str; 10] = [
    "health",
    "status",
    "index",
    "uuid",
    "pri",
    "rep",
    "docs.count",
    "docs.deleted",
    "store.size",
    "pri.store.size",
];

/// `_cat/indices` (`bytes` for the sizes' unit), as [`cat_table`] shows rows.
fn cat(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    let unit = call.params.get("bytes").map(str::to_string);
    call.params.ignore(&["health", "pri", "include_unloaded_segments"]);
    let rows = app.catalog.resolve(expression)?.iter().map(|h| cat_row(h, unit.as_deref())).collect();
    cat_table(call, "_cat/indices", &CAT_COLUMNS, rows)
}

pub async fn cat_health(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || cat_health_now(&app, &call)).await
}

const HEALTH_COLUMNS: [&str; 15] = [
    "epoch",
    "timestamp",
    "cluster",
    "status",
    "node.total",
    "node.data",
    "shards",
    "pri",
    "relo",
    "init",
    "unassign",
    "unassign.pri",
    "pending_tasks",
    "max_task_wait_time",
    "active_shards_percent",
];

/// `_cat/health`: `GET /_cluster/health` as one row, stamped with the time.
fn cat_health_now(app: &Shared, call: &Call) -> ApiResult<Response> {
    let columns = stamped_columns(call, &HEALTH_COLUMNS)?;
    let h = crate::routes::cluster::health_now_json(app)?;
    let n = |key: &str| h[key].to_string();
    let [epoch, timestamp] = now_stamp();
    let values = [
        epoch,
        timestamp,
        h["cluster_name"].as_str().unwrap_or_default().to_string(),
        h["status"].as_str().unwrap_or_default().to_string(),
        n("number_of_nodes"),
        n("number_of_data_nodes"),
        n("active_shards"),
        n("active_primary_shards"),
        n("relocating_shards"),
        n("initializing_shards"),
        n("unassigned_shards"),
        n("unassigned_primary_shards"),
        n("number_of_pending_tasks"),
        "-".to_string(),
        format!("{:.1}%", h["active_shards_percent_as_number"].as_f64().unwrap_or(100.0)),
    ];
    cat_table(call, "_cat/health", columns, vec![row(&HEALTH_COLUMNS, values)])
}

pub async fn cat_count(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || cat_count_of_indexes(&app, "*", &call)).await
}

pub async fn cat_count_of(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || cat_count_of_indexes(&app, &index, &call)).await
}

const COUNT_COLUMNS: [&str; 3] = ["epoch", "timestamp", "count"];

/// `_cat/count[/{index}]`: the live documents of the indexes named (this node's own).
fn cat_count_of_indexes(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    let columns = stamped_columns(call, &COUNT_COLUMNS)?;
    let count: u64 = app.catalog.resolve(expression)?.iter().map(|h| h.index.searcher().num_docs()).sum();
    let [epoch, timestamp] = now_stamp();
    cat_table(call, "_cat/count", columns, vec![row(&COUNT_COLUMNS, [epoch, timestamp, count.to_string()])])
}

/// The columns of a stamped table (`epoch` and `timestamp` first), without those two under `ts=false`.
fn stamped_columns<'a>(call: &Call, columns: &'a [&'a str]) -> ApiResult<&'a [&'a str]> {
    Ok(if call.params.flag("ts", true)? { columns } else { &columns[2..] })
}

/// Seconds since the epoch and the time of day (UTC), as `_cat` tables stamp a row.
fn now_stamp() -> [String; 2] {
    let seconds = crate::catalog::now_ms() / 1000;
    let day = seconds % 86_400;
    [seconds.to_string(), format!("{:02}:{:02}:{:02}", day / 3600, day % 3600 / 60, day % 60)]
}

pub async fn cat_aliases(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || cat_aliases_named(&app, "*", &call)).await
}

pub async fn cat_aliases_of(State(app): State<Shared>, Path(names): Path<String>, call: Call) -> Response {
    blocking(move || cat_aliases_named(&app, &names, &call)).await
}

const ALIAS_COLUMNS: [&str; 6] =
    ["alias", "index", "filter", "routing.index", "routing.search", "is_write_index"];

/// `_cat/aliases[/{names}]`: a row per alias and index it names, those of
/// `names` (a comma-separated list, `*` wildcards), by alias then index,
/// with its options (`*` for a filter, `-` for what is not set).
fn cat_aliases_named(app: &Shared, names: &str, call: &Call) -> ApiResult<Response> {
    let wanted: Vec<&str> = names.split(',').collect();
    let named = |a: &String| wanted.iter().any(|w| crate::pattern::matches(w, a));
    let mut pairs: Vec<(String, String, AliasOptions)> = Vec::new();
    for h in app.catalog.resolve("*")? {
        let aliases = h.settings().aliases.into_iter().filter(|(a, _)| named(a));
        pairs.extend(aliases.map(|(a, o)| (a, h.name.clone(), o)));
    }
    // In a cluster, the cluster's indexes' too, as this node's view holds them.
    for (index, record) in app.member.as_ref().map(|m| m.view().indices).unwrap_or_default() {
        let aliases = record.aliases.iter().filter(|a| named(a));
        pairs.extend(aliases.map(|a| (a.clone(), index.clone(), AliasOptions::default())));
    }
    pairs.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let set = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let rows = pairs
        .into_iter()
        .map(|(alias, index, o)| {
            let filter = set(o.filter.map(|_| "*".into()));
            let write = set(o.is_write_index.map(|w| w.to_string()));
            row(&ALIAS_COLUMNS, [alias, index, filter, set(o.index_routing), set(o.search_routing), write])
        })
        .collect();
    cat_table(call, "_cat/aliases", &ALIAS_COLUMNS, rows)
}

pub async fn cat_shards(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || cat_shards_of_indexes(&app, "*", &call)).await
}

pub async fn cat_shards_of(State(app): State<Shared>, Path(index): Path<String>, call: Call) -> Response {
    blocking(move || cat_shards_of_indexes(&app, &index, &call)).await
}

pub(crate) const SHARD_COLUMNS: [&str; 8] =
    ["index", "shard", "prirep", "state", "docs", "store", "ip", "node"];

/// `_cat/shards[/{index}]`: each index's one shard, a started primary on this node.
fn cat_shards_of_indexes(app: &Shared, expression: &str, call: &Call) -> ApiResult<Response> {
    let unit = call.params.get("bytes").map(str::to_string);
    let mut handles = app.catalog.resolve(expression)?;
    handles.sort_by(|a, b| a.name.cmp(&b.name));
    let rows = handles
        .iter()
        .map(|h| {
            let values = [
                h.name.clone(),
                "0".into(),
                "p".into(),
                "STARTED".into(),
                h.index.searcher().num_docs().to_string(),
                shown_bytes(store_bytes(h), unit.as_deref()),
                app.address.ip().to_string(),
                app.node_name.clone(),
            ];
            row(&SHARD_COLUMNS, values)
        })
        .collect();
    cat_table(call, "_cat/shards", &SHARD_COLUMNS, rows)
}

pub async fn cat_nodes(State(app): State<Shared>, call: Call) -> Response {
    blocking(move || {
        call.params.ignore(&["full_id", "include_unloaded_segments"]);
        let id = app.member.as_ref().map_or(app.node_name.as_str(), |m| m.node_id());
        let local = crate::node_stats::node_info(id, &app.node_name, app.address);
        let (nodes, manager) = match &app.member {
            // This node's figures fresh, the others' as of their last renewal.
            Some(member) => {
                let view = member.view();
                let nodes = view.nodes.into_iter().map(|n| if n.id == local.id { local.clone() } else { n });
                (nodes.collect(), view.manager)
            }
            None => (vec![local.clone()], Some(local.id.clone())),
        };
        let rows = nodes.iter().map(|n| node_row(n, manager.as_deref() == Some(n.id.as_str()))).collect();
        cat_table(&call, "_cat/nodes", &NODE_COLUMNS, rows)
    })
    .await
}

/// A node's `_cat/nodes` row; `manager`: it is the cluster manager (Elasticsearch's master).
fn node_row(node: &NodeInfo, manager: bool) -> Map<String, Value> {
    let cell =
        |column: &str| node.figures.get(column).and_then(Value::as_str).unwrap_or_default().to_string();
    let ip = node.address.parse::<SocketAddr>().map_or_else(|_| String::new(), |a| a.ip().to_string());
    let values = [
        ip,
        cell("heap.percent"),
        cell("ram.percent"),
        cell("cpu"),
        cell("load_1m"),
        cell("load_5m"),
        cell("load_15m"),
        // Elasticsearch's default roles: every one.
        "cdfhilmrstw".into(),
        if manager { "*" } else { "-" }.into(),
        node.name.clone(),
    ];
    row(&NODE_COLUMNS, values)
}

const NODE_COLUMNS: [&str; 10] = [
    "ip",
    "heap.percent",
    "ram.percent",
    "cpu",
    "load_1m",
    "load_5m",
    "load_15m",
    "node.role",
    "master",
    "name",
];

/// A row of `_cat` cells, `values` in the order of `columns`.
pub(crate) fn row<const N: usize>(columns: &[&str; N], values: [String; N]) -> Map<String, Value> {
    columns.iter().zip(values).map(|(c, v)| (c.to_string(), Value::String(v))).collect()
}

/// A size as `_cat` shows it: in the `bytes` unit asked for, else short (`4.5kb`).
pub(crate) fn shown_bytes(bytes: u64, unit: Option<&str>) -> String {
    match unit {
        Some(u) => bytes_in(bytes, u),
        None => human_bytes(bytes),
    }
}

/// A `_cat` answer: a text table (`v` for headers, `h` to pick columns, `s`
/// to sort) or, with `format=json`, a list of objects; `rows` hold every
/// column of `all`, as text.
pub(crate) fn cat_table(
    call: &Call,
    what: &str,
    all: &[&str],
    mut rows: Vec<Map<String, Value>>,
) -> ApiResult<Response> {
    let p = &call.params;
    let json_format = match p.get("format") {
        None | Some("text" | "txt") => false,
        Some("json") => true,
        Some(other) => {
            return Err(ApiError::illegal_argument(format!("[format] must be text or json, not [{other}]")))
        }
    };
    let headers = p.flag("v", false)?;
    let columns: Vec<String> = match p.get("h") {
        Some(h) => h.split(',').map(str::to_string).collect(),
        None => all.iter().map(|c| c.to_string()).collect(),
    };
    if let Some(bad) = columns.iter().find(|c| !all.contains(&c.as_str())) {
        return Err(ApiError::illegal_argument(format!("[{what}] has no column [{bad}]")));
    }
    // `s`: columns to sort by, in turn, each `:asc` (the default) or `:desc`.
    let mut keys: Vec<(String, bool)> = Vec::new();
    for spec in p.get("s").into_iter().flat_map(|s| s.split(',')) {
        let (column, desc) = match spec.split_once(':') {
            Some((c, order)) => (c, order == "desc"),
            None => (spec, false),
        };
        if !all.contains(&column) {
            return Err(ApiError::illegal_argument(format!(
                "[{what}] cannot sort by [{column}]: no such column"
            )));
        }
        keys.push((column.to_string(), desc));
    }
    p.ignore(&["expand_wildcards", "local", "master_timeout", "time"]);
    p.finish(&call.path)?;

    rows.sort_by(|a, b| {
        let compared = keys.iter().map(|(column, desc)| {
            let order = cell_order(&a[column], &b[column]);
            if *desc {
                order.reverse()
            } else {
                order
            }
        });
        compared.fold(std::cmp::Ordering::Equal, std::cmp::Ordering::then)
    });
    if json_format {
        let rows: Vec<Value> = rows
            .into_iter()
            .map(|r| Value::Object(columns.iter().map(|c| (c.clone(), r[c].clone())).collect()))
            .collect();
        return Ok(respond::ok(&Value::Array(rows)));
    }
    let mut table: Vec<Vec<String>> = Vec::new();
    if headers {
        table.push(columns.clone());
    }
    for r in &rows {
        table.push(columns.iter().map(|c| r[c].as_str().unwrap_or_default().to_string()).collect());
    }
    let right: Vec<bool> = columns.iter().map(|c| RIGHT_ALIGNED.contains(&c.as_str())).collect();
    Ok(respond::text(text_table(&table, &right)))
}

/// The columns Elasticsearch's tables right-align (each table declares its
/// numbers so): sizes, counts, percentages and loads.
const RIGHT_ALIGNED: [&str; 24] = [
    "pri",
    "rep",
    "docs.count",
    "docs.deleted",
    "store.size",
    "pri.store.size",
    "node.total",
    "node.data",
    "shards",
    "relo",
    "init",
    "unassign",
    "unassign.pri",
    "pending_tasks",
    "max_task_wait_time",
    "active_shards_percent",
    "docs",
    "store",
    "heap.percent",
    "ram.percent",
    "cpu",
    "load_1m",
    "load_5m",
    "load_15m",
];

fn cat_row(h: &Handle, unit: Option<&str>) -> Map<String, Value> {
    let searcher = h.index.searcher();
    let settings = h.settings();
    let size = shown_bytes(store_bytes(h), unit);
    let values = [
        "green".to_string(),
        "open".into(),
        h.name.clone(),
        settings.uuid.clone(),
        settings.number_of_shards.to_string(),
        settings.number_of_replicas.to_string(),
        searcher.num_docs().to_string(),
        searcher.deleted_docs().to_string(),
        size.clone(),
        size,
    ];
    row(&CAT_COLUMNS, values)
}

/// Bytes of the index's files.
pub fn store_bytes(h: &Handle) -> u64 {
    fn walk(dir: &std::path::Path) -> u64 {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    }
    walk(h.index.directory().path())
}

fn bytes_in(bytes: u64, unit: &str) -> String {
    let shift = match unit {
        "kb" => 10,
        "mb" => 20,
        "gb" => 30,
        "tb" => 40,
        _ => 0,
    };
    (bytes >> shift).to_string()
}

/// Elasticsearch's short sizes: `225b`, `4.5kb`, `12.3mb`.
fn human_bytes(bytes: u64) -> String {
    let units = [("tb", 40), ("gb", 30), ("mb", 20), ("kb", 10)];
    for (name, shift) in units {
        if bytes >= 1 << shift {
            let v = bytes as f64 / (1u64 << shift) as f64;
            let text = format!("{v:.1}");
            return format!("{}{name}", text.strip_suffix(".0").unwrap_or(&text));
        }
    }
    format!("{bytes}b")
}

/// Columns padded to their widest cell, as `_cat` prints them.
/// `rows` as text, each column as wide as its widest cell, those of the
/// columns marked in `right` aligned right, the others left.
fn text_table(rows: &[Vec<String>], right: &[bool]) -> String {
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .zip(right)
            .map(|((cell, w), right)| match right {
                true => format!("{cell:>w$}"),
                false => format!("{cell:<w$}"),
            })
            .collect();
        out.push_str(cells.join(" ").trim_end());
        out.push('\n');
    }
    out
}

/// How two cells of a `_cat` column order: as numbers when both are, else as text.
fn cell_order(x: &Value, y: &Value) -> std::cmp::Ordering {
    match (x.as_str().and_then(|s| s.parse::<f64>().ok()), y.as_str().and_then(|s| s.parse::<f64>().ok())) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => x.to_string().cmp(&y.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_tables() {
        assert_eq!(human_bytes(225), "225b");
        assert_eq!(human_bytes(4608), "4.5kb");
        assert_eq!(human_bytes(3 << 20), "3mb");
        let rows = [vec!["index".into(), "docs".into()], vec!["a".into(), "12".into()]];
        assert_eq!(text_table(&rows, &[false, false]), "index docs\na     12\n");
        assert_eq!(text_table(&rows, &[false, true]), "index docs\na       12\n");
    }
}
