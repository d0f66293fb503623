//! Entry points for coverage-guided fuzzing (`fuzz/fuzz_targets/search_body.rs`)
//! and for replaying its corpus in `cargo test`: any bytes as the body of
//! `_search`, `_count`, a scroll's first page, `_explain` and `_analyze`, and as an index
//! template laid under a creation body, against a small index of
//! every field type, through the same handlers the server runs. An error
//! answer is fine; a panic is a bug.

use std::sync::{Arc, OnceLock};

use axum::body::Bytes;
use serde_json::json;

use crate::call::Call;
use crate::catalog::Catalog;
use crate::params::Params;
use crate::routes::scroll::Scrolls;
use crate::server::{App, Shared};

const INDEX: &str = "fuzz";

/// The prefix of each process's scratch folder in the temp directory.
const SCRATCH: &str = "needle-fuzz-server-";

/// The server state, over a scratch folder of this process, made once.
fn app() -> &'static Shared {
    static APP: OnceLock<Shared> = OnceLock::new();
    APP.get_or_init(|| {
        remove_dead_scratch();
        let dir = scratch_of(std::process::id());
        let _ = std::fs::remove_dir_all(&dir);
        let catalog = Catalog::open(&dir).expect("a scratch data folder");
        let mapping = json!({"properties": {
            "title": {"type": "text"}, "body": {"type": "text", "analyzer": "english"},
            "tag": {"type": "keyword"}, "year": {"type": "long"}, "rating": {"type": "double"},
            "when": {"type": "date"}, "ok": {"type": "boolean"}, "blob": {"type": "binary"}}});
        let schema = needle_engine::Schema::from_mapping(&mapping.to_string()).expect("the fuzzing mapping");
        let h = catalog.create(INDEX, Some(schema), &json!({})).expect("the fuzzing index");
        let words = ["war", "peace", "union", "state", "tax", "taxes", "freedom", "the"];
        for i in 0..40usize {
            let tag = ["a", "b", "c"][i % 3];
            let doc = json!({
                "title": format!("{} {}", words[i % 8], words[(i / 8) % 8]),
                "body": (0..i % 7 + 1).map(|j| words[(i * 3 + j) % 8]).collect::<Vec<_>>().join(" "),
                "tag": tag, "year": 1990 + i as i64 % 13, "rating": i as f64 / 4.0 - 3.0,
                "when": format!("20{:02}-0{}-1{}", i % 30, i % 9 + 1, i % 10), "ok": i % 2 == 0,
                "blob": "AQID",
            });
            h.writer
                .put(Some(&i.to_string()), &doc.to_string(), needle_engine::IfCurrent::Any)
                .expect("a document");
            if i == 20 {
                h.writer.commit().expect("a commit");
            }
        }
        Arc::new(App {
            catalog,
            api_key: None,
            max_body: crate::call::MAX_BODY,
            node_name: "fuzz".into(),
            address: std::net::SocketAddr::from(([127, 0, 0, 1], 9200)),
            cluster_uuid: "fuzz".into(),
            scrolls: Scrolls::default(),
            searches: crate::pools::Pool::new("search", crate::pools::PoolSize::search(1)),
            writes: crate::pools::Pool::new("write", crate::pools::PoolSize::write(1)),
            member: None,
            ingest: None,
        })
    })
}

/// `data` as the body of a search, a count, a scroll, an explanation and an analysis.
pub fn search_body(data: &[u8]) {
    let app = app();
    let call = |path: &str, query: Option<&str>| Call {
        path: path.to_string(),
        params: Params::parse(query).expect("fixed parameters"),
        body: Bytes::copy_from_slice(data),
    };
    let _ = crate::routes::search::search_call(app, INDEX, &call("/fuzz/_search", None));
    let _ = crate::routes::search::run_count(app, INDEX, &call("/fuzz/_count", None));
    let _ = crate::routes::search::search_call(app, INDEX, &call("/fuzz/_search", Some("scroll=1ms")));
    let _ = crate::routes::explain::run(app, INDEX, "7", &call("/fuzz/_explain/7", None));
    let _ = crate::routes::analyze::run(app, Some(INDEX), &call("/fuzz/_analyze", None));
    let _ = crate::routes::analyze::run(app, None, &call("/_analyze", None));
    // As an index template: one that is kept must lay itself under a creation body without panicking.
    if let Ok(body) = serde_json::from_slice::<serde_json::Value>(data) {
        let templates = app.catalog.templates();
        if templates.put(crate::templates::Kind::Index, "fuzz-template", &body, false).is_ok() {
            let _ = templates.applied("fuzz-made", &json!({"settings": {"refresh_interval": "1s"}}));
            let _ =
                templates.delete(crate::templates::Kind::Index, "fuzz-template", app.catalog.data_streams());
        }
    }
}

/// Removes this process's scratch folder (after a replay of the corpus).
pub fn clean_up() {
    let _ = std::fs::remove_dir_all(scratch_of(std::process::id()));
}

fn scratch_of(pid: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("{SCRATCH}{pid}"))
}

/// Removes the scratch folders of processes that have ended: a fuzzing
/// process runs until it is stopped, so it never calls [`clean_up`].
fn remove_dead_scratch() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix(SCRATCH)).and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid.filter(|&p| !process_runs(p)) {
            let _ = std::fs::remove_dir_all(scratch_of(pid));
        }
    }
}

/// Whether process `pid` runs; where that cannot be told, as if it did.
fn process_runs(pid: u32) -> bool {
    !cfg!(target_os = "linux") || std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn scratch_folders_of_ended_processes_are_removed() {
        // Above the kernel's largest process id: never a running process.
        let (dead, alive) = (scratch_of(4_000_000_000), scratch_of(std::process::id()));
        for dir in [&dead, &alive] {
            std::fs::create_dir_all(dir.join("index")).unwrap();
        }
        remove_dead_scratch();
        assert!(!dead.exists(), "an ended process's folder is removed");
        assert!(alive.exists(), "a running process's folder stays");
        clean_up();
    }
}
