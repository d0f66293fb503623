//! The command line under conditions a new user meets: a second writer,
//! bad lines, pipes, absurd arguments, missing things. Each gets a clear
//! message and exit status 2 (1 for "not found" and "corrupt" answers), and
//! changes nothing it should not.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn needle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_needle")).args(args).output().expect("needle runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &Path, name: &str, content: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path.to_str().unwrap().to_string()
}

fn lines(prefix: &str, n: usize) -> String {
    (0..n).map(|i| format!("{{\"id\":\"{prefix}{i}\",\"body\":\"line {i} of {prefix}\"}}\n")).collect()
}

#[test]
fn a_second_ingest_is_refused_while_the_first_writes_and_nothing_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("two");
    let index = index.to_str().unwrap();
    let seed = write(tmp.path(), "seed.jsonl", lines("s", 10).as_bytes());
    assert!(needle(&["index", "--index", index, "--input", &seed]).status.success());
    // The first writer reads from a pipe we keep open, so it holds the lock while the second starts.
    let mut first = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["ingest", "--index", index, "--input", "-", "--ack"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = first.stdin.take().unwrap();
    stdin.write_all(lines("a", 500).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut out = std::io::BufReader::new(first.stdout.take().unwrap());
    let mut acked = String::new();
    std::io::BufRead::read_line(&mut out, &mut acked).unwrap();
    assert!(acked.starts_with('a'), "the first ingest acknowledged a document: {acked:?}");
    let b = write(tmp.path(), "b.jsonl", lines("b", 500).as_bytes());
    let second = needle(&["ingest", "--index", index, "--input", &b, "--ack"]);
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    assert!(text(&second.stderr).contains("locked by another writer"), "{}", text(&second.stderr));
    assert!(text(&second.stdout).is_empty(), "the refused ingest acknowledged nothing");
    assert_eq!(
        needle(&["index", "--index", index, "--input", &b]).status.code(),
        Some(2),
        "nor may an import"
    );
    drop(stdin);
    assert!(first.wait().unwrap().success());
    for id in ["s3", "a0", "a499"] {
        assert!(needle(&["get", "--index", index, id]).status.success(), "{id} lost");
    }
}

#[test]
fn a_skipped_line_leaves_no_field_type_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("p");
    let index = index.to_str().unwrap();
    let input = write(
        tmp.path(),
        "p.jsonl",
        b"{\"id\":\"1\",\"f\":42,\"g\":[1,\"x\"]}\n{\"id\":\"2\",\"f\":\"hello\"}\n",
    );
    let o = needle(&["index", "--index", index, "--input", &input, "--skip-bad"]);
    assert!(o.status.success(), "{o:?}");
    assert!(text(&o.stderr).contains("skipped line 1"), "{}", text(&o.stderr));
    let o = needle(&["search", "--index", index, "--json", "f:hello"]);
    assert!(text(&o.stdout).contains("\"_id\":\"2\""), "{o:?}");
}

#[test]
fn skip_bad_skips_lines_that_are_not_utf8() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("u");
    let input = write(tmp.path(), "u.jsonl", b"{\"id\":\"1\"}\n{\"id\":\"\xff\xfe\"}\n{\"id\":\"3\"}\n");
    let o = needle(&["index", "--index", index.to_str().unwrap(), "--input", &input, "--skip-bad"]);
    assert!(o.status.success(), "{o:?}");
    assert!(text(&o.stderr).contains("skipped line 2: not valid UTF-8"), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("indexed 2 documents"));
}

#[test]
fn a_fifo_input_is_read_once_from_its_first_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let path = fifo.clone();
    let feeder = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.write_all(lines("f", 20).as_bytes()).unwrap();
    });
    let index = tmp.path().join("idx");
    let o = needle(&["index", "--index", index.to_str().unwrap(), "--input", fifo.to_str().unwrap()]);
    feeder.join().unwrap();
    assert!(o.status.success() && text(&o.stdout).contains("indexed 20 documents"), "{o:?}");
    assert!(needle(&["get", "--index", index.to_str().unwrap(), "f0"]).status.success());
}

#[test]
fn absurd_arguments_and_missing_things_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("idx");
    let index = index.to_str().unwrap();
    let input = write(tmp.path(), "d.jsonl", lines("d", 5).as_bytes());
    let o = needle(&["index", "--index", index, "--input", &input, "--threads", "100000"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(text(&o.stderr).contains("from 1 to 256"), "{}", text(&o.stderr));

    let o = needle(&["index", "--index", index, "--input", "/nonexistent/input.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!Path::new(index).exists(), "a missing input must not create the index folder");

    let o = needle(&["check", "--index", index]);
    assert_eq!(o.status.code(), Some(2), "no index is an error, not a corrupt index: {o:?}");
    assert!(!text(&o.stdout).contains("CORRUPT") && text(&o.stderr).contains("not found"), "{o:?}");

    assert!(needle(&["index", "--index", index, "--input", &input]).status.success());
    let long_id = "x".repeat(5000);
    let bad = write(tmp.path(), "long.jsonl", format!("{{\"id\":\"{long_id}\"}}\n").as_bytes());
    let o = needle(&["index", "--index", index, "--input", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).len() < 500, "the id is cut in the message: {}", text(&o.stderr));
    let o = needle(&["get", "--index", index, &long_id]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).len() < 500, "{}", text(&o.stderr));

    // A long query (here 1,100 phrase terms) read from stdin is refused for its size.
    let long_phrase = format!("\"{}\"", (0..1100).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" "));
    let mut child = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["search", "--index", index, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(long_phrase.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(text(&o.stderr).contains("too many clauses"), "{}", text(&o.stderr));
    let mut child = Command::new(env!("CARGO_BIN_EXE_needle"))
        .args(["search", "--index", index, "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"line AND 3").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(text(&o.stdout).contains("\"_id\":\"d3\""), "{o:?}");
}
