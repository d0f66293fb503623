//! Lucene's own answers, recorded by `tables/*_cases.py` into
//! `tests/golden/lucene/`, for the tests that hold Needle's filters to them.

/// Gives each case of `tests/golden/lucene/NAME.jsonl` to `differs`, which
/// says how Needle's answer differs from it, if it does; fails when fewer
/// than `at_least` cases were recorded or any differs (showing the first few).
pub(crate) fn check(
    name: &str,
    at_least: usize,
    mut differs: impl FnMut(serde_json::Value) -> Option<String>,
) {
    let path = format!("{}/../../tests/golden/lucene/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("the recorded cases {path}: {e}"));
    let (mut cases, mut wrong) = (0, Vec::new());
    for line in text.lines() {
        cases += 1;
        wrong.extend(differs(serde_json::from_str(line).expect("a recorded case is JSON")));
    }
    assert!(cases >= at_least, "{name}: only {cases} recorded cases");
    assert!(
        wrong.is_empty(),
        "{name}: {} of {cases} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(15)].join("\n")
    );
}
