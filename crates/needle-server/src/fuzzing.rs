//! Entry points for coverage-guided fuzzing (`fuzz/fuzz_targets/search_body.rs`)
//! and for replaying its corpus in `cargo test`: any bytes as the body of
//! `_search`, `_count` and a scroll's first page, against a small index of
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

/// The server state, over a scratch folder of this process, made once.
fn app() -> &'static Shared {
    static APP: OnceLock<Shared> = OnceLock::new();
    APP.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("needle-fuzz-server-{}", std::process::id()));
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
            cluster_uuid: "fuzz".into(),
            scrolls: Scrolls::default(),
            searches: crate::pools::Pool::new("search", crate::pools::PoolSize::search(1)),
            writes: crate::pools::Pool::new("write", crate::pools::PoolSize::write(1)),
        })
    })
}

/// `data` as the body of a search, a count and a scroll.
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
}

/// Removes this process's scratch folder (after a replay of the corpus).
pub fn clean_up() {
    let _ = std::fs::remove_dir_all(
        std::env::temp_dir().join(format!("needle-fuzz-server-{}", std::process::id())),
    );
}
