//! The `search_body` fuzzing corpus (`fuzz/corpus/search_body/`: request
//! bodies of the recorded OpenSearch comparisons, malformed ones, and what
//! `cargo fuzz` kept) replayed through the same entry point as the fuzzer:
//! the server's search, count and scroll handlers must answer every one
//! without a panic.

use std::path::Path;

#[test]
fn every_search_body_runs_without_a_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/search_body");
    let mut inputs: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    inputs.sort();
    assert!(inputs.len() > 50, "the corpus holds the seeds");
    for input in inputs {
        let bytes = std::fs::read(&input).unwrap();
        let outcome = std::panic::catch_unwind(|| needle_server::fuzzing::search_body(&bytes));
        assert!(outcome.is_ok(), "{} panicked", input.display());
    }
    needle_server::fuzzing::clean_up();
}
