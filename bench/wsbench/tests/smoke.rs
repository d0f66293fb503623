//! CI smoke test of WSBench: Needle alone on the bundled State of the Union
//! corpus: build an index, generate workloads, run a closed and an open loop for
//! a second each against `serve-needle`, check the result JSON, write a report.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bench(args: &[&str]) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_needle-bench")).args(args).output().expect("runs needle-bench");
    assert!(
        out.status.success(),
        "needle-bench {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("result file")).expect("result JSON")
}

fn check_result(v: &serde_json::Value, mode: &str) {
    assert_eq!(v["engine"], "needle");
    assert_eq!(v["mode"], mode);
    assert_eq!(v["ready"]["docs"], 233);
    let cats = v["categories"].as_array().expect("categories");
    assert!(!cats.is_empty());
    for c in cats {
        let load = &c["load"];
        let l = &load["latency"];
        assert!(load["completed"].as_u64().unwrap() > 0, "{c}");
        assert_eq!(load["errors"], 0, "{c}");
        assert_eq!(load["unanswered"], 0, "{c}");
        assert!(load["qps"].as_f64().unwrap() > 0.0, "{c}");
        let (p50, p99, max) =
            (l["p50_ms"].as_f64().unwrap(), l["p99_ms"].as_f64().unwrap(), l["max_ms"].as_f64().unwrap());
        assert!(0.0 < p50 && p50 <= p99 && p99 <= max && max < 10_000.0, "{l}");
        assert!(load["cpu_seconds"].as_f64().unwrap() >= 0.0);
        assert!(c["engine_stats"]["rss_kb"].as_u64().unwrap() > 0, "{c}");
    }
}

#[test]
fn smoke() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/sotu.jsonl.gz");
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_string_lossy().into_owned();
    let corpus = corpus.to_string_lossy().into_owned();
    bench(&["index-needle", "--corpus", &corpus, "--index", &t("idx"), "--threads", "2"]);
    bench(&[
        "workload",
        "--index",
        &t("idx"),
        "--out-dir",
        &t("wl"),
        "--per-category",
        "10",
        "--corpus",
        &corpus,
    ]);
    for f in ["single", "two", "phrase"] {
        let text = std::fs::read_to_string(tmp.path().join(format!("wl/{f}.txt"))).unwrap();
        assert!(text.lines().filter(|l| !l.starts_with('#')).count() >= 10, "{f}: {text}");
    }
    let common = |w: &str, out: &str| {
        vec![
            "run".to_string(),
            "--engine".into(),
            "needle".into(),
            "--index".into(),
            t("idx"),
            "--workload".into(),
            t(w),
            "--answers-dir".into(),
            t("results/answers"),
            "--out".into(),
            t(out),
            "--threads".into(),
            "2".into(),
            "--warmup".into(),
            "0.2".into(),
        ]
    };
    let mut closed = common("wl/single.txt", "results/closed.json");
    closed.extend(["--clients", "2", "--duration", "0.5"].map(String::from));
    bench(&closed.iter().map(String::as_str).collect::<Vec<_>>());
    let mut open = common("wl/two.txt", "results/open.json");
    open.extend(["--mode", "open", "--rate", "200", "--duration", "1", "--mix"].map(String::from));
    bench(&open.iter().map(String::as_str).collect::<Vec<_>>());
    check_result(&read_json(&tmp.path().join("results/closed.json")), "closed");
    let open = read_json(&tmp.path().join("results/open.json"));
    check_result(&open, "open");
    assert_eq!(open["categories"][0]["category"], "all");
    assert_eq!(open["categories"][0]["load"]["offered_rate"], 200.0);
    // Validation answers were kept, one line per query.
    let answers = std::fs::read_to_string(tmp.path().join("results/answers/needle.two.answers.tsv")).unwrap();
    assert!(answers.lines().count() >= 10);
    bench(&["report", "--results", &t("results"), "--out", &t("report")]);
    let md = std::fs::read_to_string(tmp.path().join("report/report.md")).unwrap();
    assert!(md.contains("| term_10 |") || md.contains("| term_100 |"), "{md}");
    let svg = std::fs::read_to_string(tmp.path().join("report/qps_0.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
}

/// (name, length) of every file in `dir`.
fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len())
        })
        .collect();
    v.sort();
    v
}

/// Real-time mode: a base index of 80% of the bundled corpus, the rest added
/// while queries run; every sampled document must be found by a probe.
#[test]
fn realtime_smoke() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/sotu.jsonl.gz");
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_string_lossy().into_owned();
    let corpus = corpus.to_string_lossy().into_owned();
    bench(&[
        "split",
        "--corpus",
        &corpus,
        "--fraction",
        "0.8",
        "--head",
        &t("head.jsonl"),
        "--tail",
        &t("tail.jsonl"),
    ]);
    bench(&["index-needle", "--corpus", &t("head.jsonl"), "--index", &t("base"), "--threads", "2"]);
    bench(&["workload", "--index", &t("base"), "--out-dir", &t("wl"), "--per-category", "10"]);
    let base_files = files(&tmp.path().join("base"));
    bench(&[
        "realtime",
        "--engine",
        "needle",
        "--engine-arg=--live",
        "--base-index",
        &t("base"),
        "--work-dir",
        &t("work"),
        "--docs",
        &t("tail.jsonl"),
        "--workload",
        &t("wl/single.txt"),
        "--rate",
        "100",
        "--warmup",
        "0.2",
        "--idle",
        "0.5",
        "--probe-every",
        "5",
        "--out",
        &t("results/realtime.json"),
    ]);
    let r = read_json(&tmp.path().join("results/realtime.json"));
    assert_eq!(r["kind"], "realtime");
    assert_eq!(r["ready"]["docs"], 186, "{r}");
    assert_eq!(r["docs"], 47);
    assert_eq!(r["add_errors"], 0);
    // Documents 0, 5, ..., 45 were probed, and every one was found.
    assert_eq!(r["visibility"]["count"], 10, "{r}");
    assert_eq!(r["visibility_unresolved"], 0);
    assert!(r["ingest_docs_per_sec"].as_f64().unwrap() > 0.0);
    for phase in ["idle_before", "idle_after"] {
        assert!(r[phase]["completed"].as_u64().unwrap() > 0, "{phase}: {r}");
        assert_eq!(r[phase]["errors"], 0, "{phase}: {r}");
    }
    // The base index was copied, not changed.
    assert_eq!(files(&tmp.path().join("base")), base_files);
    bench(&["report", "--results", &t("results"), "--out", &t("report")]);
    let md = std::fs::read_to_string(tmp.path().join("report/report.md")).unwrap();
    assert!(md.contains("## Real time") && md.contains("| needle | 47 |"), "{md}");
}

/// Seed 002's update benchmark, Needle alone on the bundled corpus with
/// values: every method's updates are acknowledged and counted by the
/// engine, searches sorted by `last_modified` answer, and the base index is
/// left as it was.
#[test]
fn updates_smoke() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/sotu.jsonl.gz");
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_string_lossy().into_owned();
    bench(&["with-values", "--corpus", &corpus.to_string_lossy(), "--out", &t("values.jsonl")]);
    bench(&["index-needle", "--corpus", &t("values.jsonl"), "--index", &t("base"), "--threads", "2"]);
    bench(&["workload", "--index", &t("base"), "--out-dir", &t("wl"), "--per-category", "10"]);
    let base_files = files(&tmp.path().join("base"));
    bench(&[
        "updates",
        "--engine",
        "needle",
        "--base-index",
        &t("base"),
        "--work-dir",
        &t("work"),
        "--docs",
        &t("values.jsonl"),
        "--workload",
        &t("wl/single.txt"),
        "--rates",
        "50",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--idle",
        "0.3",
        "--out",
        &t("updates.json"),
    ]);
    let results = read_json(&tmp.path().join("updates.json"));
    let results = results.as_array().expect("one result per method");
    let methods: Vec<&str> = results.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["reindex", "numeric", "binary"]);
    for r in results {
        assert_eq!(r["errors"], 0, "{r}");
        let updated = r["updated"].as_u64().unwrap();
        assert!((40..=60).contains(&updated), "about 50 updates in a second: {r}");
        assert!(r["per_doc_ms"].as_f64().unwrap() > 0.0 && r["qps_updating"].as_f64().unwrap() > 0.0, "{r}");
        // The engine's thread CPU clock was read around each update.
        assert!(r["per_doc_cpu_ms"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(files(&tmp.path().join("base")), base_files);
}

/// The field-value benchmark, Needle alone on the bundled corpus with values:
/// every request kind is answered and timed, the kept answers hold what a scan
/// of the corpus gives (the count of a range, the stats of a field, one bucket
/// per tag), and `compare-values` finds a changed answer.
#[test]
fn values_smoke() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/sotu.jsonl.gz");
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_string_lossy().into_owned();
    bench(&["with-values", "--corpus", &corpus.to_string_lossy(), "--out", &t("values.jsonl")]);
    bench(&["index-needle", "--corpus", &t("values.jsonl"), "--index", &t("idx"), "--threads", "2"]);
    bench(&[
        "values",
        "--engine",
        "needle",
        "--index",
        &t("idx"),
        "--warmup",
        "1",
        "--runs",
        "3",
        "--answers-dir",
        &t("answers"),
        "--out",
        &t("values.json"),
    ]);
    let results = read_json(&tmp.path().join("values.json"));
    let results = results.as_array().expect("one result per request kind");
    assert_eq!(results.len(), 10, "{results:?}");
    for r in results {
        assert!(r["p50_us"].as_u64().unwrap() > 0 && r["qps"].as_f64().unwrap() > 0.0, "{r}");
    }
    let docs: Vec<serde_json::Value> = std::fs::read_to_string(tmp.path().join("values.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let words: Vec<i64> = docs.iter().map(|d| d["words"].as_i64().unwrap()).collect();
    let answers = read_json(&tmp.path().join("answers/needle.values.json"));
    let in_range = words.iter().filter(|w| (100..=200).contains(*w)).count();
    assert_eq!(answers["count_range"]["total"], in_range as u64);
    let stats = &answers["stats_histogram"]["aggs"]["w"];
    assert_eq!(stats["count"], docs.len() as u64);
    assert_eq!(stats["max"].as_f64().unwrap(), *words.iter().max().unwrap() as f64);
    assert_eq!(stats["sum"].as_f64().unwrap(), words.iter().sum::<i64>() as f64);
    let tags = &answers["terms_all"]["aggs"]["t"]["buckets"];
    // The bundled corpus's documents all come from one source.
    assert_eq!(tags, &serde_json::json!([{"key": "sotu", "doc_count": docs.len()}]), "{tags}");
    let mut longest: Vec<&i64> = words.iter().collect();
    longest.sort_unstable_by(|a, b| b.cmp(a));
    let sorted: Vec<i64> = longest.iter().take(10).map(|w| **w).collect();
    let shown: Vec<i64> = answers["sort_long"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as i64)
        .collect();
    assert_eq!(shown, sorted);

    // A copy agrees; a copy with one count changed does not.
    let mut copy = answers.clone();
    std::fs::write(tmp.path().join("answers/same.values.json"), copy.to_string()).unwrap();
    let compare = |expect_ok: bool| {
        let out = Command::new(env!("CARGO_BIN_EXE_needle-bench"))
            .args(["compare-values", "--answers-dir", &t("answers"), "--reference", "needle"])
            .output()
            .unwrap();
        assert_eq!(out.status.success(), expect_ok, "{}", String::from_utf8_lossy(&out.stdout));
    };
    compare(true);
    copy["terms_all"]["aggs"]["t"]["buckets"][0]["doc_count"] = serde_json::json!(docs.len() - 1);
    std::fs::write(tmp.path().join("answers/same.values.json"), copy.to_string()).unwrap();
    compare(false);
}
