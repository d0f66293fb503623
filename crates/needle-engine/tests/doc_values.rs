//! Doc values end to end: random adds, replacements, in-place updates,
//! deletes, commits, merges and reopens, then range filters, sorts,
//! aggregations, stored sources and versions checked against a model of the
//! live documents (a scan of what was written).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use needle_codecs::doc_values::{double_to_sortable, sortable_to_double};
use needle_engine::base64_text;
use needle_engine::{
    AggField, AggKind, Aggregation, CalendarUnit, DateInterval, Durability, FieldKind, Gathered, IfCurrent,
    Index, IndexWriter, Metric, Missing, Query, RangeQuery, RangeSpec, Schema, SearchRequest, Searcher,
    SortBy, SortKey, SortValue, TermsOrder, WriterOptions,
};
use needle_search::BoolQuery;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

const MAPPING: &str = r#"{"properties":{"n":{"type":"long"},"x":{"type":"double"},
  "b":{"type":"boolean"},"d":{"type":"date"},"body":{"type":"text"},"k":{"type":"keyword"},
  "bin":{"type":"binary"}}}"#;
const KEYWORDS: [&str; 5] = ["kiwi", "Apple", "äpfel", "fig", "fig tree"];
const DOUBLES: [f64; 9] = [-0.0, 0.0, -1.5, 2.25, 1e300, -1e300, 7.0, 0.1, -7.0];
const WORDS: [&str; 3] = ["red", "green", "blue"];

/// A live document's values as written.
#[derive(Debug, Clone, Default)]
struct Model {
    n: Vec<i64>,
    x: Vec<f64>,
    b: Option<bool>,
    d: Option<i64>,
    k: Vec<&'static str>,
    bin: Option<Vec<u8>>,
    word: &'static str,
    /// Writes of the document since it was added (its `_version`).
    version: u64,
}

fn random_doc(rng: &mut StdRng) -> Model {
    let mut m = Model { word: WORDS[rng.gen_range(0..3)], version: 1, ..Model::default() };
    if rng.gen_bool(0.8) {
        m.n = (0..rng.gen_range(1..3)).map(|_| rng.gen_range(-20..20)).collect();
    }
    if rng.gen_bool(0.7) {
        m.x = vec![DOUBLES[rng.gen_range(0..DOUBLES.len())]];
    }
    m.b = rng.gen_bool(0.7).then(|| rng.gen_bool(0.5));
    m.d = rng.gen_bool(0.7).then(|| 1_700_000_000_000 + rng.gen_range(0..10) * 86_400_000);
    m.k = (0..rng.gen_range(0..3)).map(|_| KEYWORDS[rng.gen_range(0..KEYWORDS.len())]).collect();
    m.bin = rng.gen_bool(0.6).then(|| random_bytes(rng));
    m
}

fn random_bytes(rng: &mut StdRng) -> Vec<u8> {
    (0..rng.gen_range(0..6)).map(|_| rng.gen()).collect()
}

fn to_json(id: &str, m: &Model) -> String {
    let mut doc = json!({"id": id, "body": m.word});
    match m.n.len() {
        0 => {}
        1 => doc["n"] = json!(m.n[0]),
        _ => doc["n"] = json!(m.n),
    }
    if let Some(&x) = m.x.first() {
        doc["x"] = json!(x);
    }
    if let Some(b) = m.b {
        doc["b"] = json!(b);
    }
    if !m.k.is_empty() {
        doc["k"] = json!(m.k);
    }
    if let Some(bin) = &m.bin {
        doc["bin"] = json!(base64_text(bin));
    }
    if let Some(d) = m.d {
        // Half as ISO strings, half as epoch milliseconds.
        doc["d"] = if (d / 86_400_000) % 2 == 0 { json!(iso(d)) } else { json!(d) };
    }
    doc.to_string()
}

fn iso(ms: i64) -> String {
    let secs = ms / 1000;
    let days = secs / 86_400;
    // 1970-01-01 + days, for the dates this test makes (Nov 2023).
    let base = 19_675; // 2023-11-14
    format!(
        "2023-11-{:02}T{:02}:{:02}:{:02}Z",
        14 + (days - base),
        (secs % 86_400) / 3600,
        (secs % 3600) / 60,
        secs % 60
    )
}

/// A field's values in a model, as `i64` column values.
fn values(m: &Model, field: &str) -> Vec<i64> {
    match field {
        "n" => m.n.clone(),
        "x" => m.x.iter().map(|&f| double_to_sortable(f)).collect(),
        "b" => m.b.map(i64::from).into_iter().collect(),
        "d" => m.d.into_iter().collect(),
        _ => unreachable!(),
    }
}

/// Whether a model value lies in [lo, hi], compared as the field's own type
/// (doubles by `total_cmp`: -0.0 below 0.0, as Lucene orders them).
fn in_range(field: &str, v: i64, lo: i64, hi: i64) -> bool {
    match field {
        "x" => {
            let (v, lo, hi) = (sortable_to_double(v), sortable_to_double(lo), sortable_to_double(hi));
            v.total_cmp(&lo) != Ordering::Less && v.total_cmp(&hi) != Ordering::Greater
        }
        _ => lo <= v && v <= hi,
    }
}

fn random_bounds(rng: &mut StdRng, field: &str) -> (i64, i64) {
    let mut pick = || match field {
        "n" => rng.gen_range(-22..22),
        "x" => double_to_sortable(DOUBLES[rng.gen_range(0..DOUBLES.len())]),
        "b" => rng.gen_range(0..2),
        _ => 1_700_000_000_000 + rng.gen_range(-1..11) * 86_400_000,
    };
    let (a, b) = (pick(), pick());
    (a.min(b), a.max(b))
}

fn ids(index: &IndexWriter, query: &Query, request: &SearchRequest) -> Vec<(String, Vec<SortValue>)> {
    let response = index.searcher().search_query(query, request).unwrap();
    response.hits.into_iter().map(|h| (h.id, h.sort)).collect()
}

fn check(index: &IndexWriter, model: &BTreeMap<String, Model>, rng: &mut StdRng) {
    let schema = index.index().schema();
    let all = SearchRequest { top_k: 10_000, ..SearchRequest::new("") };
    // A term on a numeric field matches the values as they are now, each hit scoring 1.
    for _ in 0..4 {
        let (v, w) = (rng.gen_range(0..20), rng.gen_range(0..20));
        let request = SearchRequest { top_k: 10_000, ..SearchRequest::new(&format!("n:{v} OR n:{w}")) };
        let hits = index.searcher().search(&request).unwrap().hits;
        assert!(hits.iter().all(|h| h.score == 1.0 || h.score == 2.0), "{v}: {:?}", hits.first());
        let mut got: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        got.sort();
        let want: Vec<&str> = model
            .iter()
            .filter(|(_, m)| m.n.contains(&v) || m.n.contains(&w))
            .map(|(id, _)| id.as_str())
            .collect();
        assert_eq!(got, want, "n:{v} OR n:{w}");
    }
    for field in ["n", "x", "b", "d"] {
        let id = schema.field_id(field).unwrap();
        for _ in 0..6 {
            let (lower, upper) = random_bounds(rng, field);
            let word = WORDS[rng.gen_range(0..3)];
            let range = Query::Range(RangeQuery { field: id, lower, upper, indexed: None });
            let filtered = Query::Bool(BoolQuery {
                must: vec![Query::term(schema.field_id("body").unwrap(), word)],
                filter: vec![range.clone()],
                ..BoolQuery::default()
            });
            // The range asked a third time: answered from what the sealed segments kept of it.
            for (query, need_word) in [(range.clone(), false), (filtered, true), (range, false)] {
                let mut got: Vec<String> = ids(index, &query, &all).into_iter().map(|(id, _)| id).collect();
                got.sort();
                let want: Vec<String> = model
                    .iter()
                    .filter(|(_, m)| !need_word || m.word == word)
                    .filter(|(_, m)| values(m, field).iter().any(|&v| in_range(field, v, lower, upper)))
                    .map(|(id, _)| id.clone())
                    .collect();
                assert_eq!(got, want, "{field} in {lower}..={upper} (word {need_word})");
                // Counted alone, a range is counted from its blocks, not match by match.
                let count = SearchRequest { top_k: 0, track_total_hits: u64::MAX, ..all.clone() };
                let total = index.searcher().search_query(&query, &count).unwrap().total;
                assert_eq!(
                    total,
                    want.len() as u64,
                    "count of {field} in {lower}..={upper} (word {need_word})"
                );
            }
        }
        for descending in [false, true] {
            let missing = if descending { i64::MIN } else { i64::MAX };
            let missing = if field == "x" {
                double_to_sortable(if descending { f64::NEG_INFINITY } else { f64::INFINITY })
            } else {
                missing
            };
            let keys = vec![SortKey { by: SortBy::Field { field: id, missing }, descending }];
            let request = SearchRequest { sort: keys.clone(), ..all.clone() };
            let got = ids(index, &Query::MatchAll, &request);
            // Counting nothing exactly lets whole blocks be skipped: the top must not change.
            let pruned = SearchRequest { top_k: 5, track_total_hits: 0, ..request.clone() };
            let top: Vec<_> = got.iter().take(5).cloned().collect();
            assert_eq!(
                ids(index, &Query::MatchAll, &pruned),
                top,
                "pruned top 5 by {field}, descending {descending}"
            );
            let key_of = |m: &Model| {
                let v = values(m, field);
                let picked = if descending { v.iter().max() } else { v.iter().min() };
                picked.copied().unwrap_or(missing)
            };
            for (id, sort) in &got {
                assert_eq!(sort, &[SortValue::Int(key_of(&model[id]))], "{id}'s sort value by {field}");
            }
            let mut want: Vec<i64> = model.values().map(key_of).collect();
            want.sort_by(|a, b| if descending { b.cmp(a) } else { a.cmp(b) });
            let got_values: Vec<i64> =
                got.iter().map(|(_, s)| if let SortValue::Int(v) = s[0] { v } else { panic!() }).collect();
            assert_eq!(got_values, want, "sorted by {field}, descending {descending}");
            // Paging with search_after (a key and the index order) walks the same list.
            let keys = vec![keys[0], SortKey { by: SortBy::Doc, descending: false }];
            let mut paged = Vec::new();
            let mut after = None;
            loop {
                let page = SearchRequest { top_k: 7, sort: keys.clone(), search_after: after, ..all.clone() };
                let hits = ids(index, &Query::MatchAll, &page);
                let Some((_, last)) = hits.last() else { break };
                after = Some(last.clone());
                paged.extend(hits.into_iter().map(|(id, _)| id));
            }
            let full: Vec<String> = got.into_iter().map(|(id, _)| id).collect();
            assert_eq!(paged, full, "search_after pages by {field}");
        }
    }
}

/// What the aggregations gathered, carried as bytes (as between a cluster's
/// nodes), answers as they do; twice merged, it counts everything twice;
/// damaged, cut short or read against other aggregations, it is an error.
fn check_wire(
    searcher: &Searcher,
    query: &Query,
    aggs: &[Aggregation],
    answered: &serde_json::Map<String, Value>,
) {
    let wire = searcher.gather(query, aggs).unwrap().to_wire().unwrap();
    let read = || Gathered::from_wire(&wire, aggs).unwrap();
    assert_eq!(&read().answer(aggs).unwrap(), answered);
    let mut twice = read();
    twice.merge(read());
    let doubled = twice.answer(aggs).unwrap();
    assert_eq!(
        doubled["n_stats"]["count"].as_u64().unwrap(),
        2 * answered["n_stats"]["count"].as_u64().unwrap()
    );
    assert_eq!(doubled["n_distinct"], answered["n_distinct"], "the same values counted once");
    for at in (0..wire.len()).step_by(7) {
        let mut damaged = wire.clone();
        damaged[at] ^= 0x20;
        assert!(Gathered::from_wire(&damaged, aggs).is_err(), "a flipped byte at {at}");
    }
    assert!(Gathered::from_wire(&wire[..wire.len() / 2], aggs).is_err());
    assert!(Gathered::from_wire(&wire, &aggs[1..]).is_err());
}

fn agg(name: &str, kind: AggKind, subs: Vec<Aggregation>) -> Aggregation {
    Aggregation { name: name.into(), kind, subs, format: None, missing: None }
}

/// A `date_histogram` in UTC showing the buckets that have documents.
fn date_histogram(field: AggField, interval: DateInterval, offset: i64) -> AggKind {
    AggKind::DateHistogram {
        field,
        interval,
        offset,
        min_doc_count: 1,
        zone: needle_engine::Zone::UTC,
        extended_bounds: None,
        hard_bounds: None,
    }
}

/// Every aggregation kind over the documents with one word, against sums
/// and counts taken over the model.
fn check_aggs(index: &IndexWriter, model: &BTreeMap<String, Model>, word: &'static str) {
    let schema = index.index().schema();
    let field = |name: &str, kind| AggField { id: schema.field_id(name).unwrap(), kind };
    let (n, x, d) = (field("n", FieldKind::Long), field("x", FieldKind::Double), field("d", FieldKind::Date));
    let aggs = vec![
        agg("n_stats", AggKind::Metric(Metric::Stats, n), vec![]),
        agg("x_max", AggKind::Metric(Metric::Max, x), vec![]),
        agg("x_count", AggKind::Metric(Metric::ValueCount, x), vec![]),
        agg("n_distinct", AggKind::Cardinality { field: n, precision_threshold: 3_000 }, vec![]),
        agg(
            "n_hist",
            AggKind::Histogram {
                field: n,
                interval: 5.0,
                offset: 0.0,
                min_doc_count: 0,
                extended_bounds: None,
                hard_bounds: None,
            },
            vec![],
        ),
        agg(
            "days",
            date_histogram(d, DateInterval::Calendar(CalendarUnit::Day), 0),
            vec![agg("n_sum", AggKind::Metric(Metric::Sum, n), vec![])],
        ),
        // Bucketed in an array where a batch allows (see `aggs/dense.rs`):
        // documents without a value, one of several values (n), quotients
        // too large to number (1e300), metrics below.
        agg(
            "x_hist",
            AggKind::Histogram {
                field: x,
                interval: 2.5,
                offset: 0.0,
                min_doc_count: 1,
                extended_bounds: None,
                hard_bounds: None,
            },
            vec![agg("n_stats", AggKind::Metric(Metric::Stats, n), vec![])],
        ),
        agg(
            "two_days",
            date_histogram(d, DateInterval::Fixed(2 * 86_400_000), 3_600_000),
            vec![agg("n_sum", AggKind::Metric(Metric::Sum, n), vec![])],
        ),
        agg(
            "k_terms",
            AggKind::Terms {
                field: AggField { id: schema.field_id("k").unwrap(), kind: FieldKind::Keyword },
                size: 10,
                min_doc_count: 1,
                order: TermsOrder::CountDesc,
                filter: Default::default(),
            },
            vec![],
        ),
        agg(
            "n_terms",
            AggKind::Terms {
                field: n,
                size: 5,
                min_doc_count: 1,
                order: TermsOrder::CountDesc,
                filter: Default::default(),
            },
            vec![],
        ),
        agg(
            "x_ranges",
            AggKind::Range {
                field: x,
                ranges: vec![
                    RangeSpec { key: None, from: None, to: Some(0.0) },
                    RangeSpec { key: Some("mid".into()), from: Some(0.0), to: Some(7.0) },
                ],
            },
            vec![],
        ),
    ];
    let query = Query::term(schema.field_id("body").unwrap(), word);
    let (total, got) = index.searcher().aggregate(&query, &aggs).unwrap();
    check_wire(&index.searcher(), &query, &aggs, &got);
    let docs: Vec<&Model> = model.values().filter(|m| m.word == word).collect();
    assert_eq!(total, docs.len() as u64);
    let ns: Vec<i64> = docs.iter().flat_map(|m| m.n.clone()).collect();
    let stats = &got["n_stats"];
    assert_eq!(stats["count"], json!(ns.len()));
    assert_eq!(stats["sum"].as_f64().unwrap(), ns.iter().sum::<i64>() as f64);
    assert_eq!(stats["min"].as_f64(), ns.iter().min().map(|&v| v as f64));
    assert_eq!(stats["max"].as_f64(), ns.iter().max().map(|&v| v as f64));
    let xs: Vec<f64> = docs.iter().flat_map(|m| m.x.clone()).collect();
    assert_eq!(got["x_max"]["value"].as_f64(), xs.iter().copied().reduce(f64::max));
    assert_eq!(got["x_count"]["value"], json!(xs.len()));
    let distinct: std::collections::BTreeSet<i64> = ns.iter().copied().collect();
    assert_eq!(got["n_distinct"]["value"], json!(distinct.len()), "exact below the threshold");
    // Histogram: each document once per bucket it has a value in; empty buckets between.
    let mut hist: BTreeMap<i64, u64> = BTreeMap::new();
    for m in &docs {
        let mut keys: Vec<i64> = m.n.iter().map(|v| v.div_euclid(5) * 5).collect();
        keys.dedup();
        keys.sort();
        keys.dedup();
        keys.into_iter().for_each(|k| *hist.entry(k).or_default() += 1);
    }
    if let (Some(&lo), Some(&hi)) = (hist.keys().next(), hist.keys().next_back()) {
        (lo..=hi).step_by(5).for_each(|k| {
            hist.entry(k).or_default();
        });
    }
    let got_hist: Vec<(f64, u64)> = got["n_hist"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["key"].as_f64().unwrap(), b["doc_count"].as_u64().unwrap()))
        .collect();
    assert_eq!(got_hist, hist.iter().map(|(&k, &c)| (k as f64, c)).collect::<Vec<_>>());
    let mut days: BTreeMap<i64, (u64, i64)> = BTreeMap::new();
    for m in docs.iter().filter(|m| m.d.is_some()) {
        let day = m.d.unwrap().div_euclid(86_400_000) * 86_400_000;
        let e = days.entry(day).or_default();
        e.0 += 1;
        e.1 += m.n.iter().sum::<i64>();
    }
    let got_days = date_buckets(&got, "days");
    assert_eq!(got_days, days.iter().map(|(&k, &(c, s))| (k, c, s as f64)).collect::<Vec<_>>());
    check_bucketed(&got, &docs);
    let mut terms: BTreeMap<i64, u64> = BTreeMap::new();
    for m in &docs {
        let mut v = m.n.clone();
        v.sort();
        v.dedup();
        v.into_iter().for_each(|k| *terms.entry(k).or_default() += 1);
    }
    let mut ranked: Vec<(i64, u64)> = terms.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let other: u64 = ranked.iter().skip(5).map(|(_, c)| c).sum();
    ranked.truncate(5);
    let got_terms: Vec<(i64, u64)> = got["n_terms"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["key"].as_i64().unwrap(), b["doc_count"].as_u64().unwrap()))
        .collect();
    assert_eq!(got_terms, ranked);
    assert_eq!(got["n_terms"]["sum_other_doc_count"], json!(other));
    let in_range = |lo: Option<f64>, hi: Option<f64>| {
        docs.iter()
            .filter(|m| m.x.iter().any(|&v| lo.is_none_or(|l| v >= l) && hi.is_none_or(|h| v < h)))
            .count() as u64
    };
    let ranges = got["x_ranges"]["buckets"].as_array().unwrap();
    assert_eq!(ranges[0]["key"], json!("*-0.0"));
    assert_eq!(ranges[0]["doc_count"], json!(in_range(None, Some(0.0))));
    assert_eq!(ranges[1]["key"], json!("mid"));
    assert_eq!(ranges[1]["doc_count"], json!(in_range(Some(0.0), Some(7.0))));
}

/// A date histogram's buckets: (key, documents, its `n_sum`).
fn date_buckets(got: &serde_json::Map<String, serde_json::Value>, name: &str) -> Vec<(i64, u64, f64)> {
    let buckets = got[name]["buckets"].as_array().unwrap();
    let bucket = |b: &serde_json::Value| {
        (b["key"].as_i64().unwrap(), b["doc_count"].as_u64().unwrap(), b["n_sum"]["value"].as_f64().unwrap())
    };
    buckets.iter().map(bucket).collect()
}

/// `x_hist`, `two_days` and `k_terms` of [`check_aggs`] against the model's documents `docs`.
fn check_bucketed(got: &serde_json::Map<String, serde_json::Value>, docs: &[&Model]) {
    // (documents, n values, their sum, min, max) by bucket key.
    type Sums = (u64, u64, i64, Option<i64>, Option<i64>);
    let add = |sums: &mut Sums, m: &Model| {
        sums.0 += 1;
        sums.1 += m.n.len() as u64;
        sums.2 += m.n.iter().sum::<i64>();
        sums.3 = sums.3.into_iter().chain(m.n.iter().copied()).min();
        sums.4 = sums.4.into_iter().chain(m.n.iter().copied()).max();
    };
    let mut x_hist: BTreeMap<i64, Sums> = BTreeMap::new();
    for m in docs {
        for &x in &m.x {
            // Elasticsearch's key: floor((x - offset) / interval) * interval + offset.
            add(x_hist.entry(double_to_sortable((x / 2.5).floor() * 2.5 + 0.0)).or_default(), m);
        }
    }
    let got_hist: Vec<(f64, u64, serde_json::Value)> = got["x_hist"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["key"].as_f64().unwrap(), b["doc_count"].as_u64().unwrap(), b["n_stats"].clone()))
        .collect();
    let want: Vec<(f64, u64, serde_json::Value)> = x_hist
        .iter()
        .map(|(&k, &(docs, count, sum, min, max))| {
            let stats = json!({"count": count, "min": min.map(|v| v as f64), "max": max.map(|v| v as f64),
                "avg": (count > 0).then(|| sum as f64 / count as f64), "sum": sum as f64});
            (sortable_to_double(k), docs, stats)
        })
        .collect();
    assert_eq!(got_hist, want, "x_hist");
    let mut two_days: BTreeMap<i64, Sums> = BTreeMap::new();
    for m in docs {
        if let Some(d) = m.d {
            let key = (d - 3_600_000).div_euclid(2 * 86_400_000) * 2 * 86_400_000 + 3_600_000;
            add(two_days.entry(key).or_default(), m);
        }
    }
    let got_days = date_buckets(got, "two_days");
    let want: Vec<(i64, u64, f64)> = two_days.iter().map(|(&k, s)| (k, s.0, s.2 as f64)).collect();
    assert_eq!(got_days, want, "two_days");
    let mut k_terms: BTreeMap<&str, u64> = BTreeMap::new();
    for m in docs {
        let mut k = m.k.clone();
        k.sort();
        k.dedup();
        k.into_iter().for_each(|k| *k_terms.entry(k).or_default() += 1);
    }
    let mut ranked: Vec<(String, u64)> = k_terms.into_iter().map(|(k, c)| (k.to_string(), c)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let got_terms: Vec<(String, u64)> = got["k_terms"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["key"].as_str().unwrap().to_string(), b["doc_count"].as_u64().unwrap()))
        .collect();
    assert_eq!(got_terms, ranked, "k_terms");
}

/// `top_hits` in the buckets of a terms aggregation and over all matches:
/// each bucket's documents, ranked by a field with index order between
/// ties, from the second on; the sort values against the model's.
fn check_top_hits(index: &IndexWriter, model: &BTreeMap<String, Model>, word: &'static str) {
    let schema = index.index().schema();
    let (n, x) = (schema.field_id("n").unwrap(), schema.field_id("x").unwrap());
    let missing = double_to_sortable(f64::INFINITY);
    let by_x = SearchRequest {
        top_k: 3,
        from: 1,
        sort: vec![SortKey { by: SortBy::Field { field: x, missing }, descending: false }],
        ..SearchRequest::new("")
    };
    let by_score = SearchRequest { top_k: 4, ..SearchRequest::new("") };
    let terms = AggKind::Terms {
        field: AggField { id: n, kind: FieldKind::Long },
        size: 4,
        min_doc_count: 1,
        order: TermsOrder::KeyAsc,
        filter: Default::default(),
    };
    let aggs = vec![
        agg("n", terms, vec![agg("lowest_x", AggKind::TopHits { request: Box::new(by_x), tag: 0 }, vec![])]),
        agg("best", AggKind::TopHits { request: Box::new(by_score), tag: 1 }, vec![]),
    ];
    let query = Query::term(schema.field_id("body").unwrap(), word);
    let mut answer = |tag: usize, found: needle_engine::TopHits| {
        let values: Vec<i64> = found
            .hits
            .iter()
            .map(|h| match h.sort.as_slice() {
                [SortValue::Int(v)] => *v,
                [] => 0,
                other => panic!("{other:?}"),
            })
            .collect();
        let ids: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
        let scored = found.hits.iter().any(|h| !h.score.is_nan());
        Ok(
            json!({"tag": tag, "total": found.total, "values": values, "ids": ids, "max_score": found.max_score, "scored": scored}),
        )
    };
    let (_, got) = index.searcher().aggregate_with(&query, &aggs, &mut answer).unwrap();
    let docs: Vec<(&String, &Model)> = model.iter().filter(|(_, m)| m.word == word).collect();
    let best = &got["best"];
    assert_eq!(best["total"], json!(docs.len()), "top_hits counts every match");
    assert_eq!(best["ids"].as_array().unwrap().len(), docs.len().min(4));
    assert!(best["ids"].as_array().unwrap().iter().all(|id| docs.iter().any(|(d, _)| json!(d) == *id)));
    assert_eq!(best["scored"], json!(!docs.is_empty()), "ranked by score: scores computed");
    assert_eq!(best["max_score"].is_null(), docs.is_empty());
    for bucket in got["n"]["buckets"].as_array().unwrap() {
        let key = bucket["key"].as_i64().unwrap();
        let in_bucket: Vec<&Model> =
            docs.iter().filter(|(_, m)| m.n.contains(&key)).map(|(_, m)| *m).collect();
        let mut want: Vec<i64> = in_bucket
            .iter()
            .map(|m| m.x.iter().copied().reduce(f64::min).map_or(missing, double_to_sortable))
            .collect();
        want.sort();
        let want: Vec<i64> = want.into_iter().skip(1).take(2).collect();
        let top = &bucket["lowest_x"];
        assert_eq!(top["total"], json!(in_bucket.len()), "bucket {key}");
        assert_eq!(top["values"], json!(want), "bucket {key}: the lowest x from the second");
        assert_eq!(top["scored"], json!(false), "sorted by a field: no scores");
    }
}

/// Sorts by the keyword field and its terms aggregation, against the model.
fn check_keywords(index: &IndexWriter, model: &BTreeMap<String, Model>) {
    let schema = index.index().schema();
    let k = schema.field_id("k").unwrap();
    for descending in [false, true] {
        let key = SortKey { by: SortBy::Keyword { field: k, missing_first: false }, descending };
        let request = SearchRequest { top_k: 10_000, sort: vec![key], ..SearchRequest::new("") };
        let got: Vec<Option<String>> = ids(index, &Query::MatchAll, &request)
            .into_iter()
            .map(|(_, sort)| match &sort[0] {
                SortValue::Bytes(b) => Some(String::from_utf8(b.to_vec()).unwrap()),
                SortValue::Missing => None,
                other => panic!("{other:?}"),
            })
            .collect();
        let pick = |m: &Model| {
            let v = m.k.iter().map(|s| s.to_string());
            if descending {
                v.max()
            } else {
                v.min()
            }
        };
        let mut want: Vec<Option<String>> = model.values().map(pick).collect();
        want.sort_by(|a, b| match (a, b) {
            (None, None) => Ordering::Equal,
            (None, _) => Ordering::Greater,
            (_, None) => Ordering::Less,
            (Some(a), Some(b)) if descending => b.cmp(a),
            (Some(a), Some(b)) => a.cmp(b),
        });
        assert_eq!(got, want, "sorted by keyword, descending {descending}");
    }
    let all = SearchRequest { top_k: 10_000, ..SearchRequest::new("") };
    let mut with_k: Vec<String> = ids(index, &Query::Exists(k), &all).into_iter().map(|(id, _)| id).collect();
    with_k.sort();
    let want: Vec<String> = model.iter().filter(|(_, m)| !m.k.is_empty()).map(|(id, _)| id.clone()).collect();
    assert_eq!(with_k, want, "exists on the keyword field");
    let field = AggField { id: k, kind: FieldKind::Keyword };
    let n = AggField { id: schema.field_id("n").unwrap(), kind: FieldKind::Long };
    // Documents without a value count as `missing` says: a keyword some
    // documents have (their buckets merge), and a number.
    let sum = Aggregation {
        missing: Some(Missing::Value(7)),
        ..agg("n_sum", AggKind::Metric(Metric::Sum, n), vec![])
    };
    let kind = AggKind::Terms {
        field,
        size: 3,
        min_doc_count: 1,
        order: TermsOrder::CountDesc,
        filter: Default::default(),
    };
    let distinct = agg("k_distinct", AggKind::Cardinality { field, precision_threshold: 3_000 }, vec![]);
    let terms = Aggregation { missing: Some(Missing::Term(b"fig"[..].into())), ..agg("k", kind, vec![sum]) };
    let (_, got) = index.searcher().aggregate(&Query::MatchAll, &[terms, distinct]).unwrap();
    let keywords: std::collections::BTreeSet<&str> =
        model.values().flat_map(|m| m.k.iter().copied()).collect();
    assert_eq!(
        got["k_distinct"]["value"],
        json!(keywords.len()),
        "keywords counted by their bytes across segments"
    );
    let mut counts: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
    for m in model.values() {
        let mut v = if m.k.is_empty() { vec!["fig"] } else { m.k.clone() };
        v.sort();
        v.dedup();
        for t in v {
            let e = counts.entry(t).or_default();
            e.0 += 1;
            e.1 += if m.n.is_empty() { 7 } else { m.n.iter().sum::<i64>() };
        }
    }
    let mut ranked: Vec<(&str, (u64, i64))> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.as_bytes().cmp(b.0.as_bytes())));
    let other: u64 = ranked.iter().skip(3).map(|(_, c)| c.0).sum();
    ranked.truncate(3);
    let got_terms: Vec<(String, u64, f64)> = got["k"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let key = b["key"].as_str().unwrap().to_string();
            (key, b["doc_count"].as_u64().unwrap(), b["n_sum"]["value"].as_f64().unwrap())
        })
        .collect();
    let want: Vec<(String, u64, f64)> =
        ranked.into_iter().map(|(t, (c, s))| (t.to_string(), c, s as f64)).collect();
    assert_eq!(got_terms, want);
    assert_eq!(got["k"]["sum_other_doc_count"], json!(other));
}

/// Sets a random numeric field of `m` to a random value in place; returns the field and the value as sent.
fn random_update(rng: &mut StdRng, m: &mut Model) -> (&'static str, serde_json::Value) {
    m.version += 1;
    match rng.gen_range(0..4) {
        3 => {
            let v = random_bytes(rng);
            m.bin = Some(v.clone());
            ("bin", json!(base64_text(&v)))
        }
        0 => {
            let v = rng.gen_range(-25..25);
            m.n = vec![v];
            ("n", json!(v))
        }
        1 => {
            let v = DOUBLES[rng.gen_range(0..DOUBLES.len())];
            m.x = vec![v];
            ("x", json!(v))
        }
        _ => {
            // Whole seconds: `iso` writes no milliseconds.
            let v = 1_700_000_000_000 + rng.gen_range(0..12) * 86_400_000 + rng.gen_range(0..1000) * 1000;
            m.d = Some(v);
            ("d", if rng.gen_bool(0.5) { json!(iso(v)) } else { json!(v.to_string()) })
        }
    }
}

/// Every live document's binary value, read from its column (alone and in a
/// search's hits), and the documents `exists` finds, are the model's.
fn check_binary(index: &IndexWriter, model: &BTreeMap<String, Model>) {
    let searcher = index.searcher();
    let bin = index.index().schema().field_id("bin").unwrap();
    let shown = needle_engine::DocValueField::new(bin);
    let request = SearchRequest { top_k: 10_000, value_fields: vec![shown], ..SearchRequest::new("") };
    let hits = searcher.search_query(&Query::MatchAll, &request).unwrap().hits;
    let shown: BTreeMap<String, Vec<serde_json::Value>> =
        hits.into_iter().filter_map(|h| Some((h.id, h.fields.get("bin")?.clone()))).collect();
    for (id, m) in model {
        let want: Vec<serde_json::Value> = m.bin.iter().map(|b| json!(base64_text(b))).collect();
        assert_eq!(searcher.doc_values(id, "bin").unwrap(), Some(want.clone()), "{id}'s bin");
        assert_eq!(shown.get(id).cloned().unwrap_or_default(), want, "{id}'s bin in a hit");
    }
    let all = SearchRequest { top_k: 10_000, ..SearchRequest::new("") };
    let mut with: Vec<String> = ids(index, &Query::Exists(bin), &all).into_iter().map(|(id, _)| id).collect();
    with.sort();
    let want: Vec<String> = model.iter().filter(|(_, m)| m.bin.is_some()).map(|(id, _)| id.clone()).collect();
    assert_eq!(with, want, "exists on the binary field");
}

/// Every live document's stored source and version hold the model's values.
fn check_sources(index: &IndexWriter, model: &BTreeMap<String, Model>) {
    let searcher = index.searcher();
    for (id, m) in model {
        let doc = searcher.get_document(id).unwrap().unwrap_or_else(|| panic!("{id} is gone"));
        assert_eq!(doc.version, m.version, "{id}'s version");
        let source: serde_json::Value = serde_json::from_str(&doc.source).unwrap();
        let numbers = |v: &serde_json::Value| -> Vec<f64> {
            match v {
                serde_json::Value::Array(a) => a.iter().map(|x| x.as_f64().unwrap()).collect(),
                serde_json::Value::Null => vec![],
                x => vec![x.as_f64().unwrap()],
            }
        };
        let n: Vec<i64> = numbers(&source["n"]).into_iter().map(|f| f as i64).collect();
        assert_eq!(n, m.n, "{id}: n in {source}");
        let x: Vec<u64> = numbers(&source["x"]).into_iter().map(f64::to_bits).collect();
        assert_eq!(x, m.x.iter().map(|f| f.to_bits()).collect::<Vec<_>>(), "{id}: x in {source}");
        assert_eq!(source["b"].as_bool(), m.b, "{id}: b in {source}");
        let d = match &source["d"] {
            serde_json::Value::String(s) => {
                Some(s.parse().ok().or_else(|| needle_engine::parse_date(s, false)).unwrap())
            }
            serde_json::Value::Null => None,
            v => v.as_i64(),
        };
        assert_eq!(d, m.d, "{id}: d in {source}");
        assert_eq!(source["bin"].as_str(), m.bin.as_deref().map(base64_text).as_deref(), "{id}: bin");
    }
}

fn run(seed: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let mapping = Schema::from_mapping(MAPPING).unwrap();
    let options = WriterOptions {
        durability: Durability::Durable,
        tail_docs: 40,
        memory_bytes: 64 << 10,
        ..WriterOptions::default()
    };
    let open =
        || Index::open_or_create(tmp.path(), Some(mapping.clone())).unwrap().writer(options.clone()).unwrap();
    let mut index = open();
    let mut model: BTreeMap<String, Model> = BTreeMap::new();
    let mut rng = StdRng::seed_from_u64(seed);
    for step in 0..600 {
        let id = format!("d{}", rng.gen_range(0..150));
        match rng.gen_range(0..100) {
            0..=59 => {
                let mut m = random_doc(&mut rng);
                m.version = model.get(&id).map_or(1, |old| old.version + 1);
                index.add(&to_json(&id, &m)).unwrap();
                model.insert(id, m);
            }
            60..=74 => match model.get_mut(&id) {
                Some(m) => {
                    let (field, value) = random_update(&mut rng, m);
                    let done = match (field, &m.bin) {
                        ("bin", Some(bytes)) if rng.gen_bool(0.5) => {
                            index.update_binary(&id, field, bytes, IfCurrent::Any).unwrap()
                        }
                        _ => index.update_numeric(&id, field, &value, IfCurrent::Any).unwrap(),
                    };
                    assert_eq!(done.version, m.version, "update of {id}.{field} to {value}");
                }
                None => {
                    let err = index.update_numeric(&id, "n", &json!(1), IfCurrent::Any).unwrap_err();
                    assert!(matches!(err, needle_engine::Error::NotFound { .. }), "{id}: {err}");
                }
            },
            75..=89 => {
                index.delete(&id).unwrap();
                model.remove(&id);
            }
            90..=94 => index.commit().unwrap(),
            95..=97 => {
                index.merge(1).unwrap();
            }
            _ => {
                drop(index); // a crash: the log replays what was acknowledged
                index = open();
            }
        }
        if step % 100 == 99 {
            check(&index, &model, &mut rng);
            check_aggs(&index, &model, WORDS[rng.gen_range(0..3)]);
            check_top_hits(&index, &model, WORDS[rng.gen_range(0..3)]);
            check_keywords(&index, &model);
            check_binary(&index, &model);
            check_sources(&index, &model);
        }
    }
    index.close().unwrap();
    let index = open();
    check(&index, &model, &mut rng);
    check_keywords(&index, &model);
    check_binary(&index, &model);
    check_sources(&index, &model);
}

#[test]
fn ranges_and_sorts_match_a_scan_through_writes_merges_and_crashes() {
    for seed in 0..3 {
        run(seed);
    }
}

#[test]
fn values_that_are_not_of_the_field_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), Some(Schema::from_mapping(MAPPING).unwrap())).unwrap();
    let writer = index.writer(WriterOptions::default()).unwrap();
    for (doc, want) in [
        (r#"{"d":"next tuesday"}"#, "failed to parse date field [next tuesday]"),
        (r#"{"n":"ten"}"#, "field `n` is a long"),
        (r#"{"b":"yes"}"#, "field `b` is a boolean"),
        (r#"{"bin":"%%"}"#, "is not base64 text"),
        (r#"{"bin":["AA==","AQ=="]}"#, "field `bin` is binary: it takes one value a document, not 2"),
    ] {
        let err = writer.add(doc).unwrap_err().to_string();
        assert!(err.contains(want), "{doc}: {err}");
    }
    assert_eq!(writer.searcher().num_docs(), 0);
}

#[test]
fn updates_that_cannot_be_made_in_place_are_refused_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let index = Index::open_or_create(tmp.path(), Some(Schema::from_mapping(MAPPING).unwrap())).unwrap();
    let writer = index.writer(WriterOptions::default()).unwrap();
    writer.add(r#"{"id":"a","n":1,"body":"red","k":"fig"}"#).unwrap();
    for (field, value, want) in [
        ("n", json!("ten"), "field `n` is a long"),
        ("d", json!("next tuesday"), "failed to parse date field"),
        ("body", json!(2), "field [body] is of type [text]"),
        ("k", json!(2), "field [k] is of type [keyword]"),
        ("b", json!(true), "field [b] is of type [boolean]"),
        ("bin", json!("not base64!"), "is not base64 text"),
        ("bin", json!(12), "field `bin` is binary: 12 is not base64 text"),
        ("_id", json!(2), "no field [_id]"),
        ("nope", json!(2), "no field [nope]"),
    ] {
        let err = writer.update_numeric("a", field, &value, IfCurrent::Any).unwrap_err().to_string();
        assert!(err.contains(want), "{field} = {value}: {err}");
    }
    let err = writer.update_numeric("a", "n", &json!(5), IfCurrent::SeqNo(99)).unwrap_err();
    assert!(matches!(err, needle_engine::Error::Conflict { .. }), "{err}");
    let err = writer.update_numeric("b", "n", &json!(5), IfCurrent::Any).unwrap_err();
    assert!(matches!(err, needle_engine::Error::NotFound { .. }), "{err}");
    let doc = writer.searcher().get_document("a").unwrap().unwrap();
    assert_eq!((doc.version, doc.source.as_str()), (1, r#"{"id":"a","n":1,"body":"red","k":"fig"}"#));
    let done = writer.update_numeric("a", "n", &json!(5), IfCurrent::SeqNo(doc.seq_no)).unwrap();
    assert_eq!(done.version, 2);
}

/// Updates made while merges run are carried over to the merged segment
/// (and persisted with it, ahead of the log's checkpoint): none is lost or
/// applied twice, through a close and through a crash.
#[test]
fn updates_made_during_merges_survive_them_and_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let mapping = Schema::from_mapping(MAPPING).unwrap();
    let options = WriterOptions { tail_docs: 50, ..WriterOptions::default() };
    let open =
        || Index::open_or_create(tmp.path(), Some(mapping.clone())).unwrap().writer(options.clone()).unwrap();
    let index = open();
    for i in 0..400 {
        index.add(&format!(r#"{{"id":"u{i}","n":0,"body":"red"}}"#)).unwrap();
        if i % 50 == 49 {
            index.commit().unwrap();
        }
    }
    let mut want: BTreeMap<String, (i64, u64)> = (0..400).map(|i| (format!("u{i}"), (0, 1))).collect();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for round in 0..30 {
                for i in 0..20 {
                    index.add(&format!(r#"{{"id":"m{round}-{i}","body":"blue"}}"#)).unwrap();
                }
                index.merge(1).unwrap();
            }
        });
        let mut rng = StdRng::seed_from_u64(11);
        for step in 0..3000 {
            let id = format!("u{}", rng.gen_range(0..400));
            let v = rng.gen_range(-1000..1000);
            index.update_numeric(&id, "n", &json!(v), IfCurrent::Any).unwrap();
            let w = want.get_mut(&id).unwrap();
            *w = (v, w.1 + 1);
            if step % 500 == 0 {
                index.commit().unwrap();
            }
        }
    });
    // Last, updates while one more merge runs and no commit after it: the
    // merge persists the updates it carries over ahead of the checkpoint.
    for i in 0..300 {
        index.add(&format!(r#"{{"id":"z{i}","body":"blue"}}"#)).unwrap();
    }
    let merging = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            index.merge(1).unwrap();
            merging.store(false, std::sync::atomic::Ordering::SeqCst);
        });
        let mut rng = StdRng::seed_from_u64(12);
        while merging.load(std::sync::atomic::Ordering::SeqCst) {
            let id = format!("u{}", rng.gen_range(0..400));
            let v = rng.gen_range(-1000..1000);
            index.update_numeric(&id, "n", &json!(v), IfCurrent::Any).unwrap();
            let w = want.get_mut(&id).unwrap();
            *w = (v, w.1 + 1);
        }
    });
    let check = |index: &IndexWriter, when: &str| {
        let searcher = index.searcher();
        for (id, &(n, version)) in &want {
            let doc = searcher.get_document(id).unwrap().unwrap();
            let source: serde_json::Value = serde_json::from_str(&doc.source).unwrap();
            assert_eq!((source["n"].as_i64(), doc.version), (Some(n), version), "{id} {when}");
        }
        let n = index.index().schema().field_id("n").unwrap();
        for v in [-1000, -1, 0, 7, 999] {
            let query = Query::Range(RangeQuery { field: n, lower: v, upper: v + 100, indexed: None });
            let request = SearchRequest { top_k: 1000, ..SearchRequest::new("") };
            let mut got: Vec<String> = ids(index, &query, &request).into_iter().map(|(id, _)| id).collect();
            got.sort();
            let expected: Vec<String> =
                want.iter().filter(|(_, w)| (v..=v + 100).contains(&w.0)).map(|(id, _)| id.clone()).collect();
            assert_eq!(got, expected, "n in {v}..={} {when}", v + 100);
        }
    };
    check(&index, "after the merges");
    drop(index); // a crash: the log replays updates the merges persisted too
    let index = open();
    check(&index, "after a crash");
    index.merge(1).unwrap();
    index.close().unwrap();
    check(&open(), "after a merge and a close");
}

/// A new index at `path` with one committed segment of random documents
/// (ids `s{segment}-{i}`, `n` set to `i`) for each count; and its model.
fn committed_segments(
    path: &std::path::Path,
    seed: u64,
    counts: &[i64],
) -> (IndexWriter, BTreeMap<String, Model>) {
    let index = Index::open_or_create(path, Some(Schema::from_mapping(MAPPING).unwrap()))
        .unwrap()
        .writer(WriterOptions::default())
        .unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = BTreeMap::new();
    for (segment, &count) in counts.iter().enumerate() {
        for i in 0..count {
            let id = format!("s{segment}-{i}");
            let mut m = random_doc(&mut rng);
            m.n = vec![i];
            index.add(&to_json(&id, &m)).unwrap();
            model.insert(id, m);
        }
        index.commit().unwrap();
    }
    (index, model)
}

/// A merge keeps the larger segment's compression dictionary and copies its
/// documents' frames as they are; a document updated in place is written
/// anew, with its new value and version. (Segments large enough to train a
/// dictionary: the random runs above write smaller ones.)
#[test]
fn a_merge_copying_stored_frames_keeps_in_place_updates() {
    let tmp = tempfile::tempdir().unwrap();
    let (index, mut model) = committed_segments(tmp.path(), 7, &[900, 300]);
    for id in ["s0-5", "s0-600", "s1-7"] {
        let m = model.get_mut(id).unwrap();
        m.n = vec![-1];
        m.version += 1;
        index.update_numeric(id, "n", &json!(-1), IfCurrent::Any).unwrap();
    }
    index.commit().unwrap();
    index.merge(1).unwrap();
    assert_eq!(index.searcher().segment_count(), 1);
    check_sources(&index, &model);
}

/// A flush compresses its documents with the dictionary of the largest
/// segment already on disk instead of training one; they read back whole.
#[test]
fn a_flush_takes_the_largest_segments_dictionary() {
    let tmp = tempfile::tempdir().unwrap();
    let (index, model) = committed_segments(tmp.path(), 11, &[900, 300, 50]);
    check_sources(&index, &model);
    let dir = needle_storage::Directory::open(tmp.path(), false).unwrap();
    let dictionary = |name: &str| {
        let segment = needle_codecs::SegmentReader::open(&dir, name).unwrap();
        segment.doc_store().dictionary().unwrap().unwrap()
    };
    let first = dictionary("seg_000000");
    assert!(!first.is_empty(), "900 documents train a dictionary");
    assert_eq!(dictionary("seg_000001"), first);
    assert_eq!(dictionary("seg_000002"), first);
}

/// In-place updates count in the writer's memory budget: many updates of a
/// committed segment are folded into it by merges, so what the writer holds
/// stays near its budget (writers wait past twice it), and no update is lost
/// on the way, nor after a reopen.
#[test]
fn updates_are_folded_to_keep_within_the_memory_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 256 << 10;
    let options = WriterOptions { memory_bytes: budget, ..WriterOptions::default() };
    let open = || {
        let mapping = Schema::from_mapping(MAPPING).unwrap();
        Index::open_or_create(tmp.path(), Some(mapping)).unwrap().writer(options.clone()).unwrap()
    };
    let writer = std::sync::Arc::new(open());
    let docs = 20_000;
    for i in 0..docs {
        writer.put(Some(&format!("d{i}")), r#"{"n": 0}"#, IfCurrent::Any).unwrap();
    }
    writer.commit().unwrap();
    // Each document once (about 140 bytes an update: 2.8 MB if none were
    // folded), in a scattered order; writers wait past twice the budget, so
    // updates never folded would stall here.
    let (done, most) = std::sync::mpsc::channel();
    let updating = std::sync::Arc::clone(&writer);
    std::thread::spawn(move || {
        let mut most = 0;
        for u in 0..docs {
            let doc = (u * 7_919) % docs;
            updating.update_numeric(&format!("d{doc}"), "n", &json!(u), IfCurrent::Any).unwrap();
            most = most.max(updating.index().memory_bytes());
        }
        drop(updating);
        done.send(most).unwrap();
    });
    let most = most.recv_timeout(std::time::Duration::from_secs(300)).expect("the updates went on");
    assert!(most <= 2 * budget + 4096, "the writer held {most} bytes for a budget of {budget}");
    let check = |writer: &IndexWriter| {
        let searcher = writer.searcher();
        for u in (0..docs).step_by(97) {
            let values = searcher.doc_values(&format!("d{}", (u * 7_919) % docs), "n").unwrap();
            assert_eq!(values, Some(vec![json!(u)]), "update {u}");
        }
    };
    check(&writer);
    std::sync::Arc::into_inner(writer).expect("the updating thread is done").close().unwrap();
    check(&open());
}

/// Fields other than text mapped with `index: false` keep their doc values
/// (as Elasticsearch's doc-values-only fields): sorted, filtered by a range,
/// aggregated and updated in place, through flushes and a merge; a text one
/// stays in the source only.
#[test]
fn fields_not_indexed_keep_their_doc_values() {
    let tmp = tempfile::tempdir().unwrap();
    let mapping = r#"{"properties": {"n": {"type": "long", "index": false}, "k": {"type": "keyword", "index": false},
      "t": {"type": "text", "index": false}, "body": {"type": "text"}}}"#;
    let index = Index::open_or_create(tmp.path(), Some(Schema::from_mapping(mapping).unwrap())).unwrap();
    let writer = index.writer(WriterOptions::default()).unwrap();
    for i in 0..30i64 {
        let tag = ["a", "b", "c"][i as usize % 3];
        let doc = json!({"n": (i * 7) % 30, "k": tag, "t": "hidden words", "body": "red"});
        writer.put(Some(&format!("d{i}")), &doc.to_string(), IfCurrent::Any).unwrap();
        if i == 14 {
            writer.commit().unwrap();
        }
    }
    writer.update_numeric("d0", "n", &json!(100), IfCurrent::Any).unwrap();
    let schema = index.schema();
    let (n, k) = (schema.field_id("n").unwrap(), schema.field_id("k").unwrap());
    let check = |writer: &IndexWriter| {
        let searcher = writer.searcher();
        let by_n = SortKey { by: SortBy::Field { field: n, missing: i64::MIN }, descending: true };
        let request = SearchRequest { top_k: 3, sort: vec![by_n], ..SearchRequest::new("") };
        let top: Vec<String> = searcher
            .search_query(&Query::MatchAll, &request)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(top, ["d0", "d17", "d4"], "sorted by the not-indexed long (d0 updated to 100)");
        let range = Query::Range(RangeQuery { field: n, lower: 0, upper: 9, indexed: None });
        let count = SearchRequest { top_k: 0, track_total_hits: u64::MAX, ..SearchRequest::new("") };
        assert_eq!(searcher.search_query(&range, &count).unwrap().total, 9, "n in 0..=9, d0 now 100");
        let terms = AggKind::Terms {
            field: AggField { id: k, kind: FieldKind::Keyword },
            size: 5,
            min_doc_count: 1,
            order: TermsOrder::KeyAsc,
            filter: Default::default(),
        };
        let (_, got) = searcher.aggregate(&Query::MatchAll, &[agg("k", terms, vec![])]).unwrap();
        assert_eq!(got["k"]["buckets"][0], json!({"key": "a", "doc_count": 10}));
        let hidden = searcher.parse("hidden").unwrap();
        assert_eq!(
            searcher.search_query(&hidden, &count).unwrap().total,
            0,
            "a text field not indexed finds nothing"
        );
    };
    check(&writer);
    writer.merge(1).unwrap();
    check(&writer);
}

/// A fresh index of a long `t` and a text `body`, written in volatile mode
/// (the write-ahead log is not what the sort tests test).
fn long_and_text_index() -> (tempfile::TempDir, Index, IndexWriter) {
    let tmp = tempfile::tempdir().unwrap();
    let mapping = r#"{"properties": {"t": {"type": "long"}, "body": {"type": "text"}}}"#;
    let index = Index::open_or_create(tmp.path(), Some(Schema::from_mapping(mapping).unwrap())).unwrap();
    let writer =
        index.writer(WriterOptions { durability: Durability::Volatile, ..WriterOptions::default() }).unwrap();
    (tmp, index, writer)
}

/// A match-all (or a range of the key) sorted by a field every document has
/// once is ranked from the field's points: the hits of a walk of every match
/// (the same sort with the index order as a second key, which takes no such
/// path), through deletions, several segments and ties, a match-all reading
/// a few leaves of doc values where the walk reads the whole column.
#[test]
fn a_match_all_sorted_by_a_field_every_document_has_reads_its_points() {
    let (_tmp, index, writer) = long_and_text_index();
    let mut rng = StdRng::seed_from_u64(7);
    for i in 0..20_000 {
        // Words of every density; `low` only where the key is low (the best
        // end of a descending sort holds none of its matches).
        let t = rng.gen_range(-500i64..500);
        let mut body = String::from("red");
        for (word, chance) in [("half", 0.5), ("rare", 0.01)] {
            if rng.gen_bool(chance) {
                body += &format!(" {word}");
            }
        }
        if t < -400 {
            body += " low";
        }
        let doc = json!({"t": t, "body": body});
        writer.put(Some(&format!("d{i}")), &doc.to_string(), IfCurrent::Any).unwrap();
        if i % 8000 == 7999 {
            writer.commit().unwrap();
        }
    }
    let live = |deleted: &[usize]| 20_000 - deleted.len() as u64;
    let t = index.schema().field_id("t").unwrap();
    let mut deleted = Vec::new();
    for round in 0..2 {
        for descending in [false, true] {
            let missing = if descending { i64::MIN } else { i64::MAX };
            let key = SortKey { by: SortBy::Field { field: t, missing }, descending };
            let in_order = SortKey { by: SortBy::Doc, descending: false };
            for k in [1, 10, 100] {
                let request = SearchRequest {
                    top_k: k,
                    track_total_hits: u64::MAX,
                    stats: true,
                    sort: vec![key],
                    ..SearchRequest::new("")
                };
                let walked = SearchRequest { sort: vec![key, in_order], ..request.clone() };
                let got = ids(&writer, &Query::MatchAll, &request);
                let want: Vec<_> = ids(&writer, &Query::MatchAll, &walked)
                    .into_iter()
                    .map(|(id, sort)| (id, sort[..1].to_vec()))
                    .collect();
                let shown = |hits: &[(String, Vec<SortValue>)]| format!("{hits:?}");
                assert_eq!(shown(&got), shown(&want), "top {k}, descending {descending}, round {round}");
                let searcher = writer.searcher();
                let fast = searcher.search_query(&Query::MatchAll, &request).unwrap();
                let slow = searcher.search_query(&Query::MatchAll, &walked).unwrap();
                assert_eq!(
                    (fast.total, slow.total),
                    (live(&deleted), live(&deleted)),
                    "totals, round {round}"
                );
                let read =
                    |r: &needle_engine::SearchResponse| r.stats.as_ref().unwrap().needed_bytes["doc_values"];
                assert!(
                    read(&fast) * 4 < read(&slow),
                    "points read {} bytes, the walk {}",
                    read(&fast),
                    read(&slow)
                );
                // A range of the key (alone, or as a filter), from the points the same
                // way; any other query, its matches gathered, then ranked from the points.
                let (lower, upper) = (rng.gen_range(-600..0), rng.gen_range(-100..600));
                let range = Query::Range(RangeQuery { field: t, lower, upper, indexed: None });
                let filtered = Query::Bool(BoolQuery {
                    must: vec![Query::MatchAll],
                    filter: vec![range.clone()],
                    ..BoolQuery::default()
                });
                let body = index.schema().field_id("body").unwrap();
                let words = ["half", "rare", "low"].map(|w| Query::term(body, w));
                for query in [range, filtered].into_iter().chain(words) {
                    let got = ids(&writer, &query, &request);
                    let want: Vec<_> = ids(&writer, &query, &walked)
                        .into_iter()
                        .map(|(id, sort)| (id, sort[..1].to_vec()))
                        .collect();
                    let case = format!("{query:?} top {k}, descending {descending}, round {round}");
                    assert_eq!(shown(&got), shown(&want), "{case}");
                    let fast = searcher.search_query(&query, &request).unwrap();
                    let slow = searcher.search_query(&query, &walked).unwrap();
                    assert_eq!(fast.total, slow.total, "{case}: total");
                    if query == Query::term(body, "half") {
                        assert!(
                            read(&fast) * 2 < read(&slow),
                            "{case}: points read {}, the walk {}",
                            read(&fast),
                            read(&slow)
                        );
                    }
                }
            }
        }
        // Then with deletions in every segment, and the last in memory no longer.
        deleted = (0..20_000).step_by(7).collect();
        for &i in &deleted {
            writer.delete(&format!("d{i}")).unwrap();
        }
        writer.commit().unwrap();
    }
}

/// A key whose values rise with the documents, sorted ascending with a
/// bounded total: the walk in index order meets the best first and skips
/// the rest of the postings, where gathering every match (what an exact
/// total needs anyway) reads them all. Both rank the same.
#[test]
fn a_key_that_runs_with_the_documents_is_walked_not_gathered() {
    let (_tmp, index, writer) = long_and_text_index();
    for i in 0..20_000 {
        writer
            .put(Some(&format!("d{i}")), &json!({"t": i, "body": "red"}).to_string(), IfCurrent::Any)
            .unwrap();
    }
    writer.commit().unwrap();
    let t = index.schema().field_id("t").unwrap();
    let red = Query::term(index.schema().field_id("body").unwrap(), "red");
    let key = SortKey { by: SortBy::Field { field: t, missing: i64::MAX }, descending: false };
    let tracked = SearchRequest {
        top_k: 10,
        track_total_hits: 100,
        stats: true,
        sort: vec![key],
        ..SearchRequest::new("")
    };
    let exact = SearchRequest { track_total_hits: u64::MAX, ..tracked.clone() };
    let searcher = writer.searcher();
    let (walked, gathered) =
        (searcher.search_query(&red, &tracked).unwrap(), searcher.search_query(&red, &exact).unwrap());
    let ids = |r: &needle_engine::SearchResponse| r.hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&walked), (0..10).map(|i| format!("d{i}")).collect::<Vec<_>>());
    assert_eq!(ids(&walked), ids(&gathered));
    assert_eq!((gathered.total, gathered.total_relation), (20_000, "eq"));
    let postings = |r: &needle_engine::SearchResponse| r.stats.as_ref().unwrap().needed_bytes["doc_ids"];
    assert!(
        postings(&walked) * 2 < postings(&gathered),
        "the walk read {} bytes of postings, the gathering {}",
        postings(&walked),
        postings(&gathered)
    );
}

/// The documents of each value of `field` among `docs` (a document counted once a value).
fn value_counts(docs: &BTreeMap<String, Vec<&'static str>>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for values in docs.values() {
        let mut v = values.clone();
        v.sort();
        v.dedup();
        v.iter().for_each(|t| *out.entry(t.to_string()).or_insert(0) += 1);
    }
    out
}

/// `terms` over every document of an index without deletions are counted
/// from the term dictionary, reading no doc values: the same buckets as the
/// walk gives, through several segments and the unflushed tail, values a
/// document repeats, `include` and a `size` below the values' count; with a
/// deletion, or on a field kept as doc values only, the walk answers.
#[test]
fn terms_over_every_document_are_counted_from_the_term_dictionary() {
    let tmp = tempfile::tempdir().unwrap();
    let mapping = r#"{"properties": {"k": {"type": "keyword"}, "kd": {"type": "keyword", "index": false}}}"#;
    let index = Index::open_or_create(tmp.path(), Some(Schema::from_mapping(mapping).unwrap())).unwrap();
    let writer =
        index.writer(WriterOptions { durability: Durability::Volatile, ..WriterOptions::default() }).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let mut docs: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for i in 0..3000 {
        let values: Vec<&'static str> =
            (0..rng.gen_range(0..4)).map(|_| KEYWORDS[rng.gen_range(0..KEYWORDS.len())]).collect();
        let id = format!("d{i}");
        writer.add(&json!({"id": id, "k": values, "kd": values}).to_string()).unwrap();
        docs.insert(id, values);
        // Two committed segments, and a thousand documents in memory.
        if i == 999 || i == 1999 {
            writer.commit().unwrap();
        }
    }
    let terms = |name: &str, field: &str, size: usize, filter: needle_engine::TermsFilter| {
        let field = AggField { id: index.schema().field_id(field).unwrap(), kind: FieldKind::Keyword };
        let kind = AggKind::Terms { field, size, min_doc_count: 1, order: TermsOrder::CountDesc, filter };
        agg(name, kind, vec![])
    };
    let buckets = |got: &serde_json::Map<String, Value>, name: &str| -> BTreeMap<String, u64> {
        let all = got[name]["buckets"].as_array().unwrap().iter();
        all.map(|b| (b["key"].as_str().unwrap().to_string(), b["doc_count"].as_u64().unwrap())).collect()
    };
    // What a request reads of doc values, once every column's dictionary is loaded.
    let doc_value_bytes = |aggs: &[Aggregation]| {
        let searcher = writer.searcher();
        searcher.aggregate(&Query::MatchAll, aggs).unwrap();
        needle_storage::counters::start();
        let (total, got) = searcher.aggregate(&Query::MatchAll, aggs).unwrap();
        let read = needle_storage::counters::finish().needed(needle_storage::counters::DataKind::DocValues);
        (total, got, read)
    };
    let include = needle_engine::TermsFilter {
        include: Some(needle_engine::TermsPattern::Keywords(vec!["fig".into(), "kiwi".into()])),
        exclude: None,
    };
    let aggs = [terms("k", "k", 10, Default::default()), terms("two", "k", 1, include)];
    let (total, got, read) = doc_value_bytes(&aggs);
    let want = value_counts(&docs);
    assert_eq!((total, buckets(&got, "k")), (3000, want.clone()));
    let top_of_two = if want["fig"] >= want["kiwi"] { "fig" } else { "kiwi" };
    assert_eq!(buckets(&got, "two"), BTreeMap::from([(top_of_two.to_string(), want[top_of_two])]));
    let other = want["fig"] + want["kiwi"] - want[top_of_two];
    assert_eq!(got["two"]["sum_other_doc_count"], json!(other));
    assert_eq!(read, 0, "counted from the term dictionary: no doc values read");

    // Doc values only: no postings to count from, the walk answers alike.
    let (_, got, read) = doc_value_bytes(&[terms("kd", "kd", 10, Default::default())]);
    assert_eq!(buckets(&got, "kd"), want);
    assert!(read > 0, "walked");

    writer.delete("d5").unwrap();
    docs.remove("d5");
    let (total, got, read) = doc_value_bytes(&[terms("k", "k", 10, Default::default())]);
    assert_eq!((total, buckets(&got, "k")), (2999, value_counts(&docs)));
    assert!(read > 0, "a deletion: walked");
}

/// A range asked again is answered from its matches kept by each sealed
/// segment; what changes the documents after (an in-place update, a
/// delete, a new document, a merge) is seen at once, never a stale answer.
#[test]
fn a_kept_filter_sees_updates_deletes_and_new_documents() {
    let (_tmp, index, writer) = long_and_text_index();
    // A segment of 3,000 documents: the range matches a tenth, more than points answer alone.
    for i in 0..3_000 {
        writer
            .put(Some(&format!("d{i}")), &json!({"t": i % 100, "body": "red"}).to_string(), IfCurrent::Any)
            .unwrap();
    }
    writer.commit().unwrap();
    let t = index.schema().field_id("t").unwrap();
    let range = Query::Range(RangeQuery { field: t, lower: 10, upper: 19, indexed: None });
    let filtered = Query::Bool(BoolQuery {
        must: vec![Query::term(index.schema().field_id("body").unwrap(), "red")],
        filter: vec![range.clone()],
        ..BoolQuery::default()
    });
    let all = SearchRequest { top_k: 10_000, ..SearchRequest::new("") };
    let matching = |want: usize| {
        for query in [&range, &filtered] {
            for _ in 0..3 {
                let got = writer.searcher().search_query(query, &all).unwrap();
                assert_eq!(got.hits.len(), want, "{query:?}");
            }
        }
    };
    matching(300);
    let kept = writer.searcher().filter_cache_stats();
    assert!(kept.entries == 1 && kept.hits >= 4, "asked again, the range is kept: {kept:?}");
    writer.update_numeric("d50", "t", &json!(15), IfCurrent::Any).unwrap();
    matching(301);
    writer.update_numeric("d10", "t", &json!(500), IfCurrent::Any).unwrap();
    matching(300);
    writer.delete("d11").unwrap();
    matching(299);
    writer.put(Some("new"), &json!({"t": 12, "body": "red"}).to_string(), IfCurrent::Any).unwrap();
    matching(300);
    writer.commit().unwrap();
    writer.merge(1).unwrap();
    matching(300);
}
