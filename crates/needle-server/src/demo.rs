//! The bundled corpus: the State of the Union addresses (233 speeches,
//! 1790-2021, public domain), loaded into index `sotu` so that a new user
//! can search at once. Each speech gets fields read from its title (`year`,
//! `president`) and its length in words (`words`), to sort, filter and
//! aggregate by.

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
        r#"{"properties": {"title": {"type": "text"}, "body": {"type": "text"}, "source": {"type": "keyword"},
            "year": {"type": "long"}, "president": {"type": "keyword"}, "words": {"type": "long"}}}"#,
    )
    .map_err(|e| e.to_string())?;
    let h = catalog.create(DEMO_INDEX, Some(mapping), &json!({})).map_err(|e| e.reason)?;
    let lines = BufReader::new(flate2::read::GzDecoder::new(SOTU)).lines();
    let (mut loaded, mut last) = (0, 0);
    for line in lines {
        let line = line.map_err(|e| format!("the bundled corpus cannot be read: {e}"))?;
        let mut doc: Value =
            serde_json::from_str(&line).map_err(|e| format!("the bundled corpus is not JSON: {e}"))?;
        let id = doc["id"].as_str().ok_or("a bundled document has no id")?.to_string();
        with_title_fields(&mut doc);
        let source = doc.to_string();
        last = h.writer.put_deferred(Some(&id), &source, IfCurrent::Any).map_err(|e| e.to_string())?.seq_no;
        loaded += 1;
    }
    h.writer.durable_through(last).map_err(|e| e.to_string())?;
    Ok(loaded)
}

/// Adds `year` and `president` from a title like "1790 State of the Union
/// (George Washington)", and `words`, the body's length in words.
fn with_title_fields(doc: &mut Value) {
    let title = doc["title"].as_str().unwrap_or_default().to_string();
    if let Some(year) = title.split(' ').next().and_then(|y| y.parse::<i64>().ok()) {
        doc["year"] = json!(year);
    }
    if let Some((_, rest)) = title.split_once('(') {
        doc["president"] = json!(rest.trim_end_matches(')'));
    }
    let words = doc["body"].as_str().map_or(0, |b| b.split_whitespace().count());
    doc["words"] = json!(words);
}
