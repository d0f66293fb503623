//! Field-value searches in-process: the requests of `bench/http/values.py`
//! (sorts, range filters and counts, aggregations) on the shared corpus (or
//! the bundled one) with the same derived fields, merged to one segment.
//! What the HTTP benchmark measures beside OpenSearch, without HTTP or JSON.

use criterion::{criterion_group, criterion_main, Criterion};
use needle_engine::{
    missing_value, AggField, AggKind, Aggregation, CalendarUnit, DateInterval, Metric, Query, RangeQuery,
    Schema, SearchRequest, Searcher, SortBy, SortKey, TermsOrder, Zone,
};
use needle_kernel_benches::{build_index_with, corpus_path, read_lines};
use needle_search::BoolQuery;

/// The allocator of the `needle` binary: an answer is a tree of small
/// values, and the allocator's cost for them is part of what is measured.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MAPPING: &str = r#"{"properties": {"title": {"type": "text"}, "body": {"type": "text"},
  "source": {"type": "keyword"}, "words": {"type": "long"}, "rating": {"type": "double"},
  "stamp": {"type": "date"}}}"#;

const DAY: u64 = 86_400_000;
const EPOCH_2000: u64 = 946_684_800_000;

/// Each corpus line with the fields `values.py` derives from it.
fn with_values(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            let mut doc: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
            let mut crc = flate2::Crc::new();
            crc.update(doc["id"].as_str().unwrap().as_bytes());
            let h = u64::from(crc.sum());
            let words = doc.get("body").and_then(|b| b.as_str()).map_or(0, |b| b.split_whitespace().count());
            doc.insert("words".into(), words.into());
            doc.insert("rating".into(), ((h % 10_000) as f64 / 100.0).into());
            doc.insert("stamp".into(), (EPOCH_2000 + (h % (25 * 365)) * DAY + h % DAY).into());
            serde_json::Value::Object(doc).to_string()
        })
        .collect()
}

fn field(searcher: &Searcher, name: &str) -> AggField {
    let schema = searcher.schema();
    let id = schema.field_id(name).unwrap();
    AggField { id, kind: schema.field(id).kind }
}

fn agg(name: &str, kind: AggKind, subs: Vec<Aggregation>) -> Aggregation {
    Aggregation { name: name.into(), kind, subs, format: None, missing: None }
}

/// A date histogram of `stamp` by `interval` with the `avg` of `rating` in each bucket.
fn date_histogram_avg(stamp: AggField, interval: DateInterval, rating: AggField) -> Aggregation {
    agg(
        "d",
        AggKind::DateHistogram {
            field: stamp,
            interval,
            offset: 0,
            min_doc_count: 0,
            zone: Zone::UTC,
            extended_bounds: None,
            hard_bounds: None,
        },
        vec![agg("r", AggKind::Metric(Metric::Avg, rating), vec![])],
    )
}

fn values(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let lines = with_values(&read_lines(&corpus_path(), usize::MAX));
    let index = build_index_with(tmp.path(), &lines, Some(Schema::from_mapping(MAPPING).unwrap()));
    let searcher = index.searcher();
    let (words, rating, stamp, source) = (
        field(&searcher, "words"),
        field(&searcher, "rating"),
        field(&searcher, "stamp"),
        field(&searcher, "source"),
    );
    let mut g = c.benchmark_group("values");

    let by_words = SortKey {
        by: SortBy::Field { field: words.id, missing: missing_value(words.kind, true, false) },
        descending: true,
    };
    let mut request = SearchRequest::new("*");
    request.sort = vec![by_words];
    g.bench_function("sort_long_match_all", |b| {
        b.iter(|| searcher.search_query(&Query::MatchAll, &request).unwrap().total)
    });

    let range = |f: AggField, lower: i64, upper: i64| {
        Query::Range(RangeQuery { field: f.id, lower, upper, indexed: None })
    };
    let government = searcher.parse("body:government").unwrap();
    let filtered = Query::Bool(BoolQuery {
        must: vec![government],
        filter: vec![range(stamp, 1_262_304_000_000, 1_420_070_399_999)],
        ..BoolQuery::default()
    });
    let request = SearchRequest::new("*");
    g.bench_function("match_date_range_filter", |b| {
        b.iter(|| searcher.search_query(&filtered, &request).unwrap().total)
    });

    let mut count = SearchRequest::new("*");
    count.top_k = 0;
    count.track_total_hits = u64::MAX;
    let long_range = range(words, 100, 200);
    g.bench_function("count_long_range", |b| {
        b.iter(|| searcher.search_query(&long_range, &count).unwrap().total)
    });

    let terms = [agg(
        "s",
        AggKind::Terms {
            field: source,
            size: 10,
            min_doc_count: 1,
            order: TermsOrder::CountDesc,
            filter: Default::default(),
        },
        vec![],
    )];
    g.bench_function("terms_keyword", |b| b.iter(|| searcher.aggregate(&Query::MatchAll, &terms).unwrap().0));

    // Calendar years, and WSBench's `date_histogram_all` (bench/wsbench/src/values.rs): 30 days.
    for (name, interval) in [
        ("date_histogram_avg", DateInterval::Calendar(CalendarUnit::Year)),
        ("date_histogram_30d_avg", DateInterval::Fixed(30 * DAY as i64)),
    ] {
        let by_date = [date_histogram_avg(stamp, interval, rating)];
        g.bench_function(name, |b| b.iter(|| searcher.aggregate(&Query::MatchAll, &by_date).unwrap().0));
    }

    let stats = [
        agg("w", AggKind::Metric(Metric::Stats, words), vec![]),
        agg(
            "h",
            AggKind::Histogram {
                field: rating,
                interval: 10.0,
                offset: 0.0,
                min_doc_count: 0,
                extended_bounds: None,
                hard_bounds: None,
            },
            vec![],
        ),
    ];
    g.bench_function("stats_histogram", |b| {
        b.iter(|| searcher.aggregate(&Query::MatchAll, &stats).unwrap().0)
    });

    let by_stamp = SortKey {
        by: SortBy::Field { field: stamp.id, missing: missing_value(stamp.kind, true, false) },
        descending: true,
    };
    let mut request = SearchRequest::new("*");
    request.sort = vec![by_stamp];
    let war = searcher.parse("body:war").unwrap();
    g.bench_function("match_sort_date", |b| b.iter(|| searcher.search_query(&war, &request).unwrap().total));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = values
}
criterion_main!(benches);
