//! `values`: sorts, range filters and aggregations (issue 16's field-value
//! benchmark), each engine serving an index of the corpus with values
//! (`needle-bench with-values`: a keyword `tag`, longs `words`, a double
//! `rating`, a date `stamp`). Every request is a search body in
//! Elasticsearch's DSL (the `values` mode of bench/PROTOCOL.md); each engine
//! runs it its own best way, in-process. Each request kind is answered once
//! and kept (`--answers`: total, hits with their sort values, aggregations),
//! then sent `--warmup` times untimed and `--runs` times timed, one at a time
//! (closed loop, one outstanding request): latency percentiles from the request
//! written to the answer read. `compare` checks that the engines' kept answers agree.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::cgroup::MemCgroup;
use crate::engine::{EngineProcess, EngineSpec, Reply};
use crate::load::new_histogram;
use crate::util::{create_output, parse_size, Result};

/// The first tenth of `stamp`'s range (2000-01-01 to 2002-07-02): about 10% of the documents.
const TENTH: (i64, i64) = (946_684_800_000, 1_025_654_400_000);

/// The request kinds: a name and a search body (hits ask for exact totals up
/// to 1,000, as Lucene's default collectors count).
pub fn requests() -> Vec<(&'static str, Value)> {
    let tenth = json!({"range": {"stamp": {"gte": TENTH.0, "lt": TENTH.1}}});
    let by_year = json!({"date_histogram": {"field": "stamp", "fixed_interval": "30d"},
                         "aggs": {"r": {"avg": {"field": "rating"}}}});
    let terms = json!({"terms": {"field": "tag", "size": 10}});
    vec![
        // What a request costs the protocol and the engine before any search work.
        ("floor", json!({"size": 0, "track_total_hits": true, "query": {"match_none": {}}})),
        (
            "sort_long",
            json!({"size": 10, "track_total_hits": 1000, "_source": false, "query": {"match_all": {}},
                             "sort": [{"words": "desc"}]}),
        ),
        (
            "match_sort_date",
            json!({"size": 10, "track_total_hits": 1000, "_source": false,
                                   "query": {"match": {"body": "war"}},
                                   "sort": [{"stamp": "desc"}]}),
        ),
        (
            "match_range_filter",
            json!({"size": 10, "track_total_hits": 1000, "_source": false, "query": {"bool": {
            "must": {"match": {"body": "government"}},
            "filter": {"range": {"stamp": {"gte": 1_262_304_000_000i64, "lt": 1_420_070_400_000i64}}}}}}),
        ),
        (
            "count_range",
            json!({"size": 0, "track_total_hits": true,
                               "query": {"range": {"words": {"gte": 100, "lte": 200}}}}),
        ),
        ("terms_all", json!({"size": 0, "track_total_hits": true, "aggs": {"t": terms}})),
        ("terms_10pct", json!({"size": 0, "track_total_hits": true, "query": tenth, "aggs": {"t": terms}})),
        ("date_histogram_all", json!({"size": 0, "track_total_hits": true, "aggs": {"d": by_year}})),
        (
            "date_histogram_10pct",
            json!({"size": 0, "track_total_hits": true, "query": tenth,
                                        "aggs": {"d": by_year}}),
        ),
        (
            "stats_histogram",
            json!({"size": 0, "track_total_hits": true, "aggs": {
            "w": {"stats": {"field": "words"}}, "h": {"histogram": {"field": "rating", "interval": 10}}}}),
        ),
    ]
}

#[derive(Args, Debug, Clone)]
pub struct ValuesArgs {
    #[command(flatten)]
    pub spec: EngineSpec,
    /// The engine's index of the corpus with values.
    #[arg(long)]
    pub index: PathBuf,
    /// Untimed runs of each request kind before the timed ones.
    #[arg(long, default_value_t = 200)]
    pub warmup: usize,
    /// Timed runs of each request kind.
    #[arg(long, default_value_t = 1000)]
    pub runs: usize,
    /// Only these request kinds (default: all).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Run the engine in a memory cgroup of this size (e.g. 512MB).
    #[arg(long, value_parser = parse_size)]
    pub memory: Option<u64>,
    #[arg(long, default_value_t = 300)]
    pub ready_timeout: u64,
    /// The answers kept, one file per engine label: `DIR/LABEL.values.json`.
    #[arg(long, default_value = "bench/results/answers")]
    pub answers_dir: PathBuf,
    /// JSON results (one object per request kind).
    #[arg(long)]
    pub out: PathBuf,
}

/// One engine's answer to one request kind.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Answered {
    pub total: u64,
    pub ids: Vec<String>,
    /// Each hit's sort value (or score).
    pub values: Vec<f64>,
    /// The aggregations, in Elasticsearch's shape as the engine answered them.
    pub aggs: Value,
}

/// One request kind's figures.
#[derive(Debug, Serialize)]
pub struct ValuesResult {
    pub engine: String,
    pub request: String,
    pub runs: usize,
    pub qps: f64,
    /// Latency, microseconds.
    pub min_us: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

pub fn values(a: &ValuesArgs) -> Result<Vec<ValuesResult>> {
    let cmd = a.spec.command()?;
    let cgroup =
        a.memory.map(|bytes| MemCgroup::create(&format!("values-{}", a.spec.label()), bytes)).transpose()?;
    let mut engine = EngineProcess::start(
        &cmd,
        &a.index,
        1,
        &a.spec.engine_arg,
        cgroup,
        Duration::from_secs(a.ready_timeout),
    )?;
    let chosen: Vec<_> =
        requests().into_iter().filter(|(n, _)| a.only.is_empty() || a.only.iter().any(|o| o == n)).collect();
    let mut next_id = 0u64;
    let mut kept = BTreeMap::new();
    for (name, body) in &chosen {
        match ask(&mut engine, &mut next_id, body)? {
            Ok(answer) => {
                kept.insert(name.to_string(), answer);
            }
            Err(message) => eprintln!("{}: {name}: {message} (not timed)", a.spec.label()),
        }
    }
    let path = a.answers_dir.join(format!("{}.values.json", a.spec.label()));
    let mut w = create_output(&path)?;
    serde_json::to_writer_pretty(&mut w, &kept)?;
    writeln!(w)?;
    drop(w);
    let mut out = Vec::new();
    for (name, body) in chosen.iter().filter(|(n, _)| kept.contains_key(*n)) {
        for _ in 0..a.warmup {
            ask(&mut engine, &mut next_id, body)?.map_err(|m| format!("{name}: {m}"))?;
        }
        let mut latency: Histogram<u64> = new_histogram();
        let started = Instant::now();
        for _ in 0..a.runs {
            let sent = Instant::now();
            ask(&mut engine, &mut next_id, body)?.map_err(|m| format!("{name}: {m}"))?;
            latency.record((sent.elapsed().as_micros() as u64).max(1))?;
        }
        let r = ValuesResult {
            engine: a.spec.label(),
            request: name.to_string(),
            runs: a.runs,
            qps: a.runs as f64 / started.elapsed().as_secs_f64(),
            min_us: latency.min(),
            mean_us: latency.mean(),
            p50_us: latency.value_at_quantile(0.5),
            p90_us: latency.value_at_quantile(0.9),
            p99_us: latency.value_at_quantile(0.99),
            max_us: latency.max(),
        };
        eprintln!(
            "{} {name}: {:.0} QPS, p50 {} us, p99 {} us, min {} us",
            r.engine, r.qps, r.p50_us, r.p99_us, r.min_us
        );
        out.push(r);
    }
    engine.finish()?;
    let mut w = create_output(&a.out)?;
    serde_json::to_writer_pretty(&mut w, &out)?;
    writeln!(w)?;
    Ok(out)
}

/// The protocol's answer line to a `values` request from an answer in
/// Elasticsearch's shape (`needle_server::search_body`'s, or a server's over
/// HTTP): the total, the hits' ids, and each hit's first sort value (or
/// score) and the aggregations, written from the answer without copying it.
pub fn answer_line(id: &str, answer: &Value) -> Result<String> {
    let hits = answer["hits"]["hits"].as_array().map(Vec::as_slice).unwrap_or_default();
    let ids: Vec<&str> = hits.iter().filter_map(|h| h["_id"].as_str()).collect();
    let values: Vec<&Value> =
        hits.iter().map(|h| h.get("sort").and_then(|s| s.get(0)).unwrap_or(&h["_score"])).collect();
    let aggs = answer.get("aggregations").unwrap_or(&Value::Null);
    let extra = format!("{{\"sort\":{},\"aggs\":{aggs}}}", serde_json::to_string(&values)?);
    Ok(format!("{id}\t{}\t{}\t\t{extra}\n", answer["hits"]["total"]["value"], ids.join(",")))
}

/// Sends one `values` request and waits for its answer: the engine's
/// answer, or its error message.
fn ask(
    engine: &mut EngineProcess,
    next_id: &mut u64,
    body: &Value,
) -> Result<std::result::Result<Answered, String>> {
    let id = *next_id;
    *next_id += 1;
    let k = body["size"].as_u64().unwrap_or(10);
    engine.send_mode(id, "values", k as usize, &body.to_string())?;
    engine.flush()?;
    loop {
        match engine.recv(Duration::from_secs(600))? {
            Reply::Answer { id: got, total, ids, extra, .. } if got == id => {
                let extra: Value = serde_json::from_str(&extra)
                    .map_err(|e| format!("request {id}: the answer's values are not JSON: {e}"))?;
                let values = extra["sort"].as_array().map(|v| v.iter().filter_map(Value::as_f64).collect());
                return Ok(Ok(Answered {
                    total,
                    ids,
                    values: values.unwrap_or_default(),
                    aggs: extra.get("aggs").cloned().unwrap_or(Value::Null),
                }));
            }
            Reply::Error { id: got, message, .. } if got == id => return Ok(Err(message)),
            Reply::Closed => return Err("the engine exited".into()),
            _ => {}
        }
    }
}

/// Compares every engine's kept answers (`DIR/*.values.json`) with those of
/// `reference`: totals (where the request asks for them exact), hits
/// (the same ids, in any order among equal sort values), aggregations (the
/// same buckets, keys, counts and metrics within a relative 1e-6). Prints each
/// difference; returns how many there were.
pub fn compare(dir: &Path, reference: &str) -> Result<usize> {
    let read = |label: &str| -> Result<BTreeMap<String, Answered>> {
        let path = dir.join(format!("{label}.values.json"));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(serde_json::from_str(&text)?)
    };
    let base = read(reference)?;
    let mut differences = 0;
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let Some(label) = name.strip_suffix(".values.json") else { continue };
        if label == reference {
            continue;
        }
        let other = read(label)?;
        for (request, mine) in &base {
            let Some(theirs) = other.get(request) else {
                println!("{label} {request}: not answered");
                continue;
            };
            let exact =
                requests().iter().any(|(n, body)| n == request && body["track_total_hits"] == json!(true));
            let found = differ(mine, theirs, exact);
            if found.is_empty() {
                println!("{label} {request}: agrees with {reference}");
            }
            for difference in &found {
                println!("{label} {request}: {difference}");
            }
            differences += found.len();
        }
    }
    Ok(differences)
}

/// How two answers to one request differ (empty: they agree); totals only
/// when the request asks for them `exact` (else an engine may give a lower bound).
fn differ(a: &Answered, b: &Answered, exact: bool) -> Vec<String> {
    let mut out = Vec::new();
    if exact && a.total != b.total {
        out.push(format!("total {} against {}", a.total, b.total));
    }
    if !same_hits(a, b) {
        out.push(format!("hits {:?} {:?} against {:?} {:?}", a.ids, a.values, b.ids, b.values));
    }
    let (na, nb) = (normalized(&a.aggs), normalized(&b.aggs));
    if !close(&na, &nb) {
        out.push(format!("aggregations {na} against {nb}"));
    }
    out
}

/// The same hits: at each rank the same sort value, and the same ids within
/// each run of equal values (engines break ties by their own document order).
/// A run cut by the page's end is not checked for ids.
fn same_hits(a: &Answered, b: &Answered) -> bool {
    if a.ids.len() != b.ids.len() || a.values.len() != b.values.len() {
        return false;
    }
    if a.values.is_empty() {
        return a.ids == b.ids;
    }
    let equal = |x: f64, y: f64| x == y || (x - y).abs() <= 1e-5 * x.abs().max(y.abs());
    if a.values.iter().zip(&b.values).any(|(&x, &y)| !equal(x, y)) {
        return false;
    }
    let mut start = 0;
    while start < a.ids.len() {
        let end = (start..a.ids.len()).find(|&i| !equal(a.values[i], a.values[start])).unwrap_or(a.ids.len());
        if end < a.ids.len() {
            let (mut x, mut y) = (a.ids[start..end].to_vec(), b.ids[start..end].to_vec());
            x.sort();
            y.sort();
            if x != y {
                return false;
            }
        }
        start = end;
    }
    true
}

/// The aggregations reduced to what every engine must agree on: for a bucket
/// aggregation its buckets' keys (numbers as floats), counts and
/// sub-aggregations; for a metric its value (or `count`, `min`, `max`, `avg`,
/// `sum` of `stats`). Bookkeeping fields (`key_as_string`,
/// `doc_count_error_upper_bound`, `sum_other_doc_count`) are left out.
fn normalized(aggs: &Value) -> Value {
    let Value::Object(map) = aggs else { return Value::Null };
    let mut out = serde_json::Map::new();
    for (name, agg) in map {
        let shown = if let Some(buckets) = agg.get("buckets").and_then(Value::as_array) {
            let buckets: Vec<Value> = buckets
                .iter()
                .map(|b| {
                    let key = b["key"].as_f64().map_or(b["key"].clone(), |k| json!(k));
                    let subs = b.as_object().map(|o| {
                        let subs: serde_json::Map<_, _> = o
                            .iter()
                            .filter(|(_, v)| v.is_object())
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect();
                        normalized(&Value::Object(subs))
                    });
                    json!({"key": key, "doc_count": b["doc_count"], "subs": subs})
                })
                .collect();
            json!(buckets)
        } else if agg.get("count").is_some() {
            json!({"count": agg["count"], "min": agg["min"], "max": agg["max"], "avg": agg["avg"], "sum": agg["sum"]})
        } else {
            agg.get("value").cloned().unwrap_or(Value::Null)
        };
        out.insert(name.clone(), shown);
    }
    Value::Object(out)
}

/// Equal, numbers within a relative 1e-6.
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            x == y || (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| close(v, w)),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(ids: &[&str], values: &[f64], aggs: Value) -> Answered {
        Answered { total: 5, ids: ids.iter().map(|s| s.to_string()).collect(), values: values.to_vec(), aggs }
    }

    #[test]
    fn hits_agree_up_to_ties_within_the_page() {
        let a = answer(&["a", "b", "c"], &[3.0, 2.0, 2.0], Value::Null);
        assert!(same_hits(&a, &answer(&["a", "c", "b"], &[3.0, 2.0, 2.0], Value::Null)));
        assert!(!same_hits(
            &answer(&["a", "b", "c", "d"], &[3.0, 2.0, 2.0, 1.0], Value::Null),
            &answer(&["a", "b", "x", "d"], &[3.0, 2.0, 2.0, 1.0], Value::Null)
        ));
        assert!(!same_hits(&a, &answer(&["a", "b", "c"], &[3.0, 2.0, 1.0], Value::Null)));
        assert!(!same_hits(&a, &answer(&["b", "a", "c"], &[3.0, 2.0, 2.0], Value::Null)));
    }

    #[test]
    fn aggregations_agree_on_keys_counts_and_metrics_only() {
        let needle = json!({"d": {"buckets": [{"key": 946684800000u64, "key_as_string": "2000-01-01",
                                               "doc_count": 4, "r": {"value": 49.5}}]},
                            "t": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 3,
                                  "buckets": [{"key": "x", "doc_count": 2}]}});
        let peer = json!({"d": {"buckets": [{"key": 946684800000.0, "doc_count": 4, "r": {"value": 49.50000001}}]},
                          "t": {"buckets": [{"key": "x", "doc_count": 2}]}});
        assert!(close(&normalized(&needle), &normalized(&peer)));
        let off = json!({"d": {"buckets": [{"key": 946684800000.0, "doc_count": 4, "r": {"value": 49.6}}]},
                         "t": {"buckets": [{"key": "x", "doc_count": 2}]}});
        assert!(!close(&normalized(&needle), &normalized(&off)));
        let recount = json!({"d": {"buckets": [{"key": 946684800000.0, "doc_count": 5, "r": {"value": 49.5}}]},
                             "t": {"buckets": [{"key": "x", "doc_count": 2}]}});
        assert!(!close(&normalized(&needle), &normalized(&recount)));
    }
}
