//! The bundled corpus: the State of the Union addresses (233 speeches,
//! 1790-2021, public domain), loaded into index `sotu` so that a new user
//! can search at once.

use std::io::{BufRead, BufReader};

use needle_engine::{IfCurrent, Schema};
use serde_json::{json, Value};

use crate::server::Server;

const SOTU: &[u8] = include_bytes!("../../../examples/data/sotu.jsonl.gz");

pub const DEMO_INDEX: &str = "sotu";

/// Loads the speeches into index `sotu` unless it exists; returns how many
/// documents were loaded (0 when the index was there already).
pub fn load_demo(server: &Server) -> Result<usize, String> {
    let catalog = server.catalog();
    if catalog.exists(DEMO_INDEX) {
        return Ok(0);
    }
    let mapping = Schema::from_mapping(
        r#"{"properties": {"title": {"type": "text"}, "body": {"type": "text"}, "source": {"type": "keyword"}}}"#,
    )
    .map_err(|e| e.to_string())?;
    let h = catalog.create(DEMO_INDEX, Some(mapping), &json!({})).map_err(|e| e.reason)?;
    let lines = BufReader::new(flate2::read::GzDecoder::new(SOTU)).lines();
    let (mut loaded, mut last) = (0, 0);
    for line in lines {
        let line = line.map_err(|e| format!("the bundled corpus cannot be read: {e}"))?;
        let doc: Value =
            serde_json::from_str(&line).map_err(|e| format!("the bundled corpus is not JSON: {e}"))?;
        let id = doc["id"].as_str().ok_or("a bundled document has no id")?;
        last = h.writer.put_deferred(Some(id), &line, IfCurrent::Any).map_err(|e| e.to_string())?.seq_no;
        loaded += 1;
    }
    h.writer.durable_through(last).map_err(|e| e.to_string())?;
    Ok(loaded)
}
