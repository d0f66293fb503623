//! Doc values end to end: random adds, replacements, deletes, commits,
//! merges and reopens, then range filters and sorts checked against a model
//! of the live documents (a scan of what was written).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use needle_codecs::doc_values::{double_to_sortable, sortable_to_double};
use needle_engine::{
    Durability, Index, IndexWriter, Query, RangeQuery, Schema, SearchRequest, SortBy, SortKey, SortValue,
    WriterOptions,
};
use needle_search::BoolQuery;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

const MAPPING: &str = r#"{"properties":{"n":{"type":"long"},"x":{"type":"double"},
  "b":{"type":"boolean"},"d":{"type":"date"},"body":{"type":"text"}}}"#;
const DOUBLES: [f64; 9] = [-0.0, 0.0, -1.5, 2.25, 1e300, -1e300, 7.0, 0.1, -7.0];
const WORDS: [&str; 3] = ["red", "green", "blue"];

/// A live document's values as written.
#[derive(Debug, Clone, Default)]
struct Model {
    n: Vec<i64>,
    x: Vec<f64>,
    b: Option<bool>,
    d: Option<i64>,
    word: &'static str,
}

fn random_doc(rng: &mut StdRng) -> Model {
    let mut m = Model { word: WORDS[rng.gen_range(0..3)], ..Model::default() };
    if rng.gen_bool(0.8) {
        m.n = (0..rng.gen_range(1..3)).map(|_| rng.gen_range(-20..20)).collect();
    }
    if rng.gen_bool(0.7) {
        m.x = vec![DOUBLES[rng.gen_range(0..DOUBLES.len())]];
    }
    m.b = rng.gen_bool(0.7).then(|| rng.gen_bool(0.5));
    m.d = rng.gen_bool(0.7).then(|| 1_700_000_000_000 + rng.gen_range(0..10) * 86_400_000);
    m
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
    for field in ["n", "x", "b", "d"] {
        let id = schema.field_id(field).unwrap();
        for _ in 0..6 {
            let (lower, upper) = random_bounds(rng, field);
            let word = WORDS[rng.gen_range(0..3)];
            let range = Query::Range(RangeQuery { field: id, lower, upper });
            let filtered = Query::Bool(BoolQuery {
                must: vec![Query::term(schema.field_id("body").unwrap(), word)],
                filter: vec![range.clone()],
                ..BoolQuery::default()
            });
            for (query, need_word) in [(range, false), (filtered, true)] {
                let mut got: Vec<String> = ids(index, &query, &all).into_iter().map(|(id, _)| id).collect();
                got.sort();
                let want: Vec<String> = model
                    .iter()
                    .filter(|(_, m)| !need_word || m.word == word)
                    .filter(|(_, m)| values(m, field).iter().any(|&v| in_range(field, v, lower, upper)))
                    .map(|(id, _)| id.clone())
                    .collect();
                assert_eq!(got, want, "{field} in {lower}..={upper} (word {need_word})");
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
            0..=74 => {
                let m = random_doc(&mut rng);
                index.add(&to_json(&id, &m)).unwrap();
                model.insert(id, m);
            }
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
        }
    }
    index.close().unwrap();
    let index = open();
    check(&index, &model, &mut rng);
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
    ] {
        let err = writer.add(doc).unwrap_err().to_string();
        assert!(err.contains(want), "{doc}: {err}");
    }
    assert_eq!(writer.searcher().num_docs(), 0);
}
