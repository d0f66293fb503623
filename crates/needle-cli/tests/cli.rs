//! The `needle` command end to end: index, search (text and JSON), get,
//! merge and check, including the exit codes and messages of failures.

use std::path::Path;
use std::process::{Command, Output};

fn needle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_needle")).args(args).output().expect("needle runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn write_docs(dir: &Path, name: &str, lines: &[&str]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n")).unwrap();
    path.to_str().unwrap().to_string()
}

const DOCS: &[&str] = &[
    r#"{"id":"a","title":"The quick brown fox","body":"jumps over the lazy dog"}"#,
    r#"{"id":"b","title":"Lazy afternoons","body":"the dog sleeps; the fox is quick"}"#,
    r#"{"id":"c","title":"Nothing here","body":"an unrelated line of text"}"#,
];

#[test]
fn index_search_get_merge_check() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("idx");
    let index = index.to_str().unwrap();
    let input = write_docs(tmp.path(), "docs.jsonl", DOCS);
    let o = needle(&["index", "--index", index, "--input", &input]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("indexed 3 documents"), "{}", stdout(&o));
    let more = write_docs(tmp.path(), "more.jsonl", &[r#"{"id":"d","title":"quick quick quick fox"}"#]);
    assert!(needle(&["index", "--index", index, "--input", &more]).status.success());

    let o = needle(&["search", "--index", index, "--json", "--highlight", "\"quick brown\""]);
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["hits"][0]["_id"], "a");
    assert_eq!(v["hits"][0]["highlight"]["title"][0], "The <em>quick brown</em> fox");
    assert!(v["took_ms"].is_number());
    assert_eq!(v["hits"].as_array().unwrap().len(), 1);

    let o = needle(&["search", "--index", index, "--json", "+fox +dog -title:lazy"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ids: Vec<&str> = v["hits"].as_array().unwrap().iter().map(|h| h["_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a"]);

    for (query, want) in [
        ("NOT fox", vec!["c"]),
        ("fox AND title:lazy", vec!["b"]),
        ("(fox OR line) AND NOT dog", vec!["c", "d"]),
    ] {
        let o = needle(&["search", "--index", index, "--json", query]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let ids: Vec<&str> =
            v["hits"].as_array().unwrap().iter().map(|h| h["_id"].as_str().unwrap()).collect();
        assert_eq!(ids, want, "{query}");
    }
    // A misspelling within an edit (a swap) and a prefix, both marked where they matched.
    let o = needle(&["search", "--index", index, "--json", "--highlight", "slepes~ AND laz*"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["hits"][0]["_id"], "b");
    assert_eq!(v["hits"][0]["highlight"]["body"][0], "the dog <em>sleeps</em>; the fox is quick");
    assert_eq!(v["hits"][0]["highlight"]["title"][0], "<em>Lazy</em> afternoons");
    let o = needle(&["search", "--index", index, "title:[a b]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("a range is `[lower TO upper]`"), "{o:?}");

    let o = needle(&["search", "--index", index, "--top", "2", "fox"]);
    let text = stdout(&o);
    assert!(
        text.starts_with("3 hits") && text.lines().filter(|l| l.contains("score")).count() == 2,
        "{text}"
    );

    let o = needle(&["get", "--index", index, "b"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o).trim(), DOCS[1]);
    let o = needle(&["get", "--index", index, "nope"]);
    assert_eq!(o.status.code(), Some(1));

    let o = needle(&["merge", "--index", index, "--max-segments", "1"]);
    assert!(o.status.success() && stdout(&o).contains("1 segment(s) now"), "{}", stdout(&o));
    let o = needle(&["check", "--index", index, "--json"]);
    assert!(o.status.success());
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["docs"], 4);
    assert_eq!(report["ok"], true);
}

/// Every record's first page is asked for before a query reads it; with
/// adaptive prefetch on, the whole zone of a record at least that long.
#[test]
fn adaptive_prefetch_asks_for_a_long_records_zone() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("idx");
    let index = index.to_str().unwrap();
    // "common" in two documents of three, 1 to 13 times: some 15 KB of doc ids and frequencies.
    let body = |i: usize| match i {
        0 | 29_997 => "rare".to_string(),
        _ if i.is_multiple_of(3) => "other".to_string(),
        _ => "common ".repeat(i % 13 + 1),
    };
    let docs: Vec<String> = (0..30_000).map(|i| format!(r#"{{"id":"{i}","body":"{}"}}"#, body(i))).collect();
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let input = write_docs(tmp.path(), "docs.jsonl", &docs);
    assert!(needle(&["index", "--index", index, "--input", &input]).status.success());
    let prefetched = |extra: &[&str]| {
        let mut args = vec!["search", "--index", index, "--json", "--stats"];
        args.extend_from_slice(extra);
        // Matches nothing: `common` is sought to two documents far apart, not read on.
        args.push("+common +rare");
        let o = needle(&args);
        assert!(o.status.success(), "{o:?}");
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["stats"]["prefetched_bytes"].as_u64().unwrap()
    };
    let (without, with) = (prefetched(&[]), prefetched(&["--prefetch-min", "8KB"]));
    assert!(without > 0 && without <= 2 * 4096, "the records' first pages: {without} bytes");
    assert!(with > 8192, "the zone: {with} bytes");
    assert_eq!(prefetched(&["--prefetch-min", "100MB"]), without, "a zone below the threshold");
}

#[test]
fn errors_are_clear_and_exit_nonzero() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("idx");
    let index = index.to_str().unwrap();
    let input = write_docs(tmp.path(), "docs.jsonl", DOCS);
    assert!(needle(&["index", "--index", index, "--input", &input]).status.success());

    let bad = write_docs(tmp.path(), "bad.jsonl", &[DOCS[0], "{oops"]);
    let o = needle(&["index", "--index", index, "--input", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 2: malformed JSON"), "{o:?}");

    let o = needle(&["search", "--index", index, "\"unclosed"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unterminated phrase"));

    let o = needle(&["search", "--index", tmp.path().join("missing").to_str().unwrap(), "x"]);
    assert_eq!(o.status.code(), Some(2));

    let victim = std::fs::read_dir(index)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "post"))
        .unwrap();
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[10] ^= 0xFF;
    std::fs::write(&victim, bytes).unwrap();
    let name = victim.file_name().unwrap().to_str().unwrap();
    let o = needle(&["check", "--index", index]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains(name) && stdout(&o).contains("CORRUPT"), "{}", stdout(&o));
    // Opening checks footers only (a large index is not read whole before a
    // query): a search reading the damaged bytes fails naming the file, one
    // that does not answers; none crashes.
    let o = needle(&["search", "--index", index, "fox"]);
    match o.status.code() {
        Some(0) => {}
        Some(2) => assert!(String::from_utf8_lossy(&o.stderr).contains(name), "{o:?}"),
        other => panic!("search on a corrupt index exited with {other:?}: {o:?}"),
    }
}

#[test]
fn reads_gzip_and_stdin() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("idx");
    let gz = tmp.path().join("docs.jsonl.gz");
    let mut enc =
        flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    enc.write_all(DOCS.join("\n").as_bytes()).unwrap();
    enc.finish().unwrap();
    let o = needle(&["index", "--index", index.to_str().unwrap(), "--input", gz.to_str().unwrap()]);
    assert!(stdout(&o).contains("indexed 3 documents"), "{o:?}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["index", "--index", index.to_str().unwrap(), "--input", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(br#"{"id":"s","title":"from stdin"}"#).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(stdout(&o).contains("indexed 1 documents") && stdout(&o).contains("holds 4 documents"), "{o:?}");
}

#[test]
fn update_sets_numeric_values_in_place_or_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("idx");
    let index = index.to_str().unwrap();
    let docs = [r#"{"id":"a","n":1,"t":"red"}"#, r#"{"id":"b","n":2,"t":"blue"}"#];
    assert!(needle(&["index", "--index", index, "--input", &write_docs(tmp.path(), "d.jsonl", &docs)])
        .status
        .success());
    let o = needle(&["update", "--index", index, "a", "n", "40"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&needle(&["get", "--index", index, "a"])).trim(), r#"{"id":"a","n":40,"t":"red"}"#);
    // A bad line anywhere: no update is made.
    for (lines, want) in [
        (
            vec![r#"{"id":"b","field":"n","value":5}"#, r#"{"id":"zz","field":"n","value":6}"#],
            "document [zz]",
        ),
        (vec![r#"{"id":"b","field":"n","value":5}"#, r#"{"id":"a","field":"t","value":6}"#], "type [text]"),
        (vec![r#"{"id":"b","field":"n","value":5}"#, r#"{"id":"a","field":"n"}"#], "line 2: no `value`"),
    ] {
        let o = needle(&["update", "--index", index, "--input", &write_docs(tmp.path(), "u.jsonl", &lines)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(2) && err.contains(want), "{want}: {o:?}");
        assert_eq!(stdout(&needle(&["get", "--index", index, "b"])).trim(), docs[1]);
    }
    let lines = [r#"{"id":"b","field":"n","value":5}"#, r#"{"id":"a","field":"n","value":"6"}"#];
    let o = needle(&["update", "--index", index, "--input", &write_docs(tmp.path(), "u.jsonl", &lines)]);
    assert!(o.status.success() && stdout(&o).contains("updated 2 value(s)"), "{o:?}");
    let o = needle(&["get", "--index", index, "a", "b"]);
    assert_eq!(
        stdout(&o),
        "{\"id\":\"a\",\"n\":\"6\",\"t\":\"red\"}\n{\"id\":\"b\",\"n\":5,\"t\":\"blue\"}\n"
    );
    // A term query finds the value set in place.
    let o = needle(&["search", "--index", index, "--json", "n:6"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["hits"][0]["_id"], "a", "{v}");
    assert!(needle(&["check", "--index", index]).status.success());
}

#[test]
fn update_sets_binary_values_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("idx");
    let index = index.to_str().unwrap();
    let mapping = tmp.path().join("mapping.json");
    std::fs::write(&mapping, r#"{"properties":{"t":{"type":"text"},"bin":{"type":"binary"}}}"#).unwrap();
    let docs = [r#"{"id":"a","t":"red","bin":"AAEC"}"#];
    let input = write_docs(tmp.path(), "d.jsonl", &docs);
    let o = needle(&["index", "--index", index, "--mapping", mapping.to_str().unwrap(), "--input", &input]);
    assert!(o.status.success(), "{o:?}");
    let o = needle(&["update", "--index", index, "a", "bin", "not base64!"]);
    assert!(o.status.code() == Some(2) && String::from_utf8_lossy(&o.stderr).contains("not base64"), "{o:?}");
    let o = needle(&["update", "--index", index, "a", "bin", "/w=="]);
    assert!(o.status.success(), "{o:?}");
    let got: serde_json::Value =
        serde_json::from_str(&stdout(&needle(&["get", "--index", index, "a"]))).unwrap();
    assert_eq!(got, serde_json::json!({"id": "a", "t": "red", "bin": "/w=="}));
    assert!(needle(&["check", "--index", index]).status.success());
}
