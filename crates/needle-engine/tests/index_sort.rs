//! The index sort end to end: an index created with one keeps, through
//! random adds, replacements, deletes, in-place updates of other fields,
//! commits, merges and reopens, the answers of the same index without it,
//! for searches sorted by that field (stopping early in sorted segments) or
//! by anything else, and its merged segments hold their documents in order.

use needle_engine::{
    missing_value, Durability, FieldKind, IfCurrent, Index, IndexWriter, Query, Schema, SearchRequest,
    SortBy, SortKey, WriterOptions,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

const PROPERTIES: &str = r#"{"n": {"type": "long"}, "x": {"type": "double"}, "body": {"type": "text"}}"#;
const WORDS: [&str; 3] = ["red", "green", "blue"];

fn schema(sort: Option<(&str, &str)>) -> Schema {
    let properties: serde_json::Value = serde_json::from_str(PROPERTIES).unwrap();
    let mut body = json!({"mappings": {"properties": properties}});
    if let Some((order, missing)) = sort {
        body["settings"] =
            json!({"index": {"sort.field": "n", "sort.order": order, "sort.missing": missing}});
    }
    Schema::from_mapping(&body.to_string()).unwrap()
}

fn random_doc(rng: &mut StdRng) -> String {
    let mut doc = json!({"body": format!("{} {}", WORDS[rng.gen_range(0..3)], WORDS[rng.gen_range(0..3)])});
    match rng.gen_range(0..10) {
        0 => {}
        1 => doc["n"] = json!([rng.gen_range(-5..5), rng.gen_range(-5..5)]),
        _ => doc["n"] = json!(rng.gen_range(-30..30)),
    }
    if rng.gen_bool(0.5) {
        doc["x"] = json!(rng.gen_range(0..100) as f64 / 4.0);
    }
    doc.to_string()
}

/// The sort key of `writer`'s index sort.
fn sorted_key(writer: &IndexWriter) -> Option<SortKey> {
    let schema = writer.index().schema();
    let sort = schema.sort.as_ref()?;
    let missing = missing_value(FieldKind::Long, sort.descending, sort.missing_first);
    let field = schema.field_id(&sort.field)?;
    Some(SortKey { by: SortBy::Field { field, missing }, descending: sort.descending })
}

/// Both indexes answer `query` sorted by `n` (or `x`, or the score) alike.
fn same_answers(plain: &IndexWriter, sorted: &IndexWriter, rng: &mut StdRng) {
    let schema = plain.index().schema();
    for _ in 0..12 {
        let query = match rng.gen_range(0..5) {
            0 => Query::MatchAll,
            // Positions reordered with their postings.
            4 => plain.searcher().parse("\"red green\"").unwrap(),
            w => Query::term(schema.field_id("body").unwrap(), WORDS[w - 1]),
        };
        let descending = rng.gen_bool(0.5);
        let (name, kind) = if rng.gen_bool(0.8) { ("n", FieldKind::Long) } else { ("x", FieldKind::Double) };
        let missing = missing_value(kind, descending, rng.gen_bool(0.3));
        let key =
            SortKey { by: SortBy::Field { field: schema.field_id(name).unwrap(), missing }, descending };
        let by_score = rng.gen_bool(0.15);
        let request = SearchRequest {
            // By score, every hit: equal scores rank in index order, which the sort changes.
            top_k: if by_score { 1_000 } else { [1, 5, 30][rng.gen_range(0..3)] },
            track_total_hits: [1, 10, 1_000][rng.gen_range(0..3)],
            sort: if by_score { Vec::new() } else { vec![key] },
            // Offsets reordered with their postings.
            highlight: by_score,
            ..SearchRequest::new("")
        };
        let a = plain.searcher().search_query(&query, &request).unwrap();
        let b = sorted.searcher().search_query(&query, &request).unwrap();
        let shown = |r: &needle_engine::SearchResponse| -> Vec<(String, String)> {
            let hit =
                |h: &needle_engine::Hit| format!("{:?} {:?} {:?}", h.sort, h.score.to_bits(), h.highlight);
            r.hits.iter().map(|h| (h.id.clone(), hit(h))).collect()
        };
        let in_index_order = request.sort.first().is_some_and(|k| Some(k) == sorted_key(sorted).as_ref());
        if !request.sort.is_empty() && !in_index_order {
            // Ties rank in index order, which the index sort changes: the values agree.
            let values = |r: &needle_engine::SearchResponse| {
                r.hits.iter().map(|h| format!("{:?}", h.sort)).collect::<Vec<_>>()
            };
            assert_eq!(values(&a), values(&b), "{query:?} {:?}", request.sort);
        } else if by_score {
            let (mut x, mut y) = (shown(&a), shown(&b));
            x.sort();
            y.sort();
            assert_eq!(x, y, "{query:?} by score");
        } else {
            assert_eq!(shown(&a), shown(&b), "{query:?} {:?}", request.sort);
        }
        let exact = |r: &needle_engine::SearchResponse| r.total_relation == "eq";
        match (exact(&a), exact(&b)) {
            (true, true) => assert_eq!(a.total, b.total, "{query:?}"),
            (true, false) => {
                assert!(b.total >= request.track_total_hits.min(a.total), "{query:?}: {}", b.total)
            }
            (false, true) => {
                assert!(a.total >= request.track_total_hits.min(b.total), "{query:?}: {}", a.total)
            }
            (false, false) => {}
        }
    }
}

fn run(seed: u64, order: &str, missing: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let options = WriterOptions {
        durability: Durability::Durable,
        tail_docs: 30,
        memory_bytes: 64 << 10,
        ..Default::default()
    };
    let open = |dir: &str, schema: Schema| {
        Index::open_or_create(&tmp.path().join(dir), Some(schema)).unwrap().writer(options.clone()).unwrap()
    };
    let mut plain = open("plain", schema(None));
    let mut sorted = open("sorted", schema(Some((order, missing))));
    let mut rng = StdRng::seed_from_u64(seed);
    let mut merged = false;
    for step in 0..500 {
        let id = format!("d{}", rng.gen_range(0..120));
        match rng.gen_range(0..100) {
            0..=64 => {
                let doc = random_doc(&mut rng);
                plain.put(Some(&id), &doc, IfCurrent::Any).unwrap();
                sorted.put(Some(&id), &doc, IfCurrent::Any).unwrap();
            }
            65..=74 => {
                let x = json!(rng.gen_range(0..100) as f64);
                let a = plain.update_numeric(&id, "x", &x, IfCurrent::Any);
                let b = sorted.update_numeric(&id, "x", &x, IfCurrent::Any);
                assert_eq!(a.is_ok(), b.is_ok(), "{id}");
            }
            75..=84 => {
                plain.delete(&id).unwrap();
                sorted.delete(&id).unwrap();
            }
            85..=91 => {
                plain.commit().unwrap();
                sorted.commit().unwrap();
            }
            92..=96 => {
                let max = rng.gen_range(1..3);
                plain.merge(max).unwrap();
                sorted.merge(max).unwrap();
                merged = true;
            }
            _ => {
                drop((plain, sorted));
                plain = open("plain", schema(None));
                sorted = open("sorted", schema(Some((order, missing))));
            }
        }
        if step % 50 == 49 {
            same_answers(&plain, &sorted, &mut rng);
        }
    }
    plain.commit().unwrap();
    sorted.commit().unwrap();
    sorted.merge(1).unwrap();
    plain.merge(1).unwrap();
    same_answers(&plain, &sorted, &mut rng);
    let report = sorted.index().check();
    assert!(report.ok, "{:?}", report.problems);
    assert!(merged);
    assert_eq!(report.sorted_segments, report.segments, "a merged index is sorted: {report:?}");
    assert_eq!(plain.index().check().sorted_segments, 0);
}

#[test]
fn sorted_indexes_answer_as_unsorted_ones() {
    for (seed, order, missing) in
        [(1, "desc", "_last"), (2, "asc", "_last"), (3, "desc", "_first"), (4, "asc", "_first")]
    {
        run(seed, order, missing);
    }
}

/// A search sorted as the index is stops in a sorted segment once it has its
/// hits: its total is then a lower bound, while every hit is the one a full
/// walk finds. (A match-all is ranked from the field's points instead and
/// counts exactly, as Elasticsearch does.)
#[test]
fn a_search_in_the_index_order_stops_early() {
    let tmp = tempfile::tempdir().unwrap();
    let writer = Index::open_or_create(tmp.path(), Some(schema(Some(("desc", "_last")))))
        .unwrap()
        .writer(WriterOptions::default())
        .unwrap();
    for i in 0..5_000 {
        writer
            .put(
                Some(&i.to_string()),
                &json!({"n": (i * 7919) % 5_000, "body": "red"}).to_string(),
                IfCurrent::Any,
            )
            .unwrap();
    }
    writer.commit().unwrap();
    writer.merge(1).unwrap();
    assert_eq!(writer.index().check().sorted_segments, 1, "a force-merge rewrites a flushed segment sorted");
    let schema = writer.index().schema();
    let n = schema.field_id("n").unwrap();
    let key = |descending| SortKey {
        by: SortBy::Field { field: n, missing: missing_value(FieldKind::Long, descending, false) },
        descending,
    };
    let request =
        SearchRequest { top_k: 3, track_total_hits: 100, sort: vec![key(true)], ..SearchRequest::new("") };
    let red = Query::term(schema.field_id("body").unwrap(), "red");
    let found = writer.searcher().search_query(&red, &request).unwrap();
    let ids: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
    let want: Vec<String> = [4999, 4998, 4997]
        .iter()
        .map(|v| (0..5000).find(|i| (i * 7919) % 5000 == *v).unwrap().to_string())
        .collect();
    assert_eq!(ids, want);
    assert_eq!(found.total_relation, "gte");
    assert!(
        (100..5_000).contains(&found.total),
        "counted past what is tracked, then stopped: {}",
        found.total
    );
    let all = writer.searcher().search_query(&Query::MatchAll, &request).unwrap();
    assert_eq!(all.hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), want);
    assert_eq!((all.total, all.total_relation), (5_000, "eq"));
    // The other direction walks every match.
    let request = SearchRequest { sort: vec![key(false)], track_total_hits: u64::MAX, ..request };
    let found = writer.searcher().search_query(&red, &request).unwrap();
    assert_eq!((found.total, found.total_relation), (5_000, "eq"));
    // The sort field is not updated in place: that would break the order.
    let err = writer.update_numeric("7", "n", &json!(1), IfCurrent::Any).unwrap_err();
    assert!(err.to_string().contains("index sort"), "{err}");
}

#[test]
fn index_sort_settings_are_checked() {
    let with = |settings: serde_json::Value| {
        let properties: serde_json::Value = serde_json::from_str(PROPERTIES).unwrap();
        Schema::from_mapping(
            &json!({"settings": settings, "mappings": {"properties": properties}}).to_string(),
        )
    };
    let sort = with(json!({"index.sort.field": "n", "index.sort.order": "desc"})).unwrap().sort.unwrap();
    assert_eq!((sort.field.as_str(), sort.descending, sort.missing_first), ("n", true, false));
    let nested =
        with(json!({"index": {"sort": {"field": ["x"], "missing": "_first"}}})).unwrap().sort.unwrap();
    assert_eq!((nested.field.as_str(), nested.descending, nested.missing_first), ("x", false, true));
    for (settings, says) in [
        (json!({"index.sort.field": "nope"}), "unknown index sort field:[nope]"),
        (json!({"index.sort.field": "body"}), "of type [text]"),
        (json!({"index.sort.field": ["n", "x"]}), "by one field"),
        (json!({"index.sort.field": "n", "index.sort.order": "up"}), "illegal sort order [up]"),
        (json!({"index.sort.order": "desc"}), "needs [index.sort.field]"),
        (json!({"index.sort.field": "n", "index.sort.mode": "median"}), "[index.sort.mode] median"),
    ] {
        let err = with(settings.clone()).unwrap_err().to_string();
        assert!(err.contains(says), "{settings}: {err}");
    }
    assert!(with(json!({})).unwrap().sort.is_none());
}
