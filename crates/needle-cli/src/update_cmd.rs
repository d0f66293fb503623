//! `needle update`: numeric and binary fields of stored documents set in place.

use std::io::BufRead;
use std::path::Path;
use std::process::ExitCode;

use needle_core::{Error, Result};
use needle_engine::{IfCurrent, Index};
use serde_json::Value;

/// One update: the document, the field, the value.
type Update = (String, String, Value);

pub fn run(index: &Path, input: Option<&Path>, args: &[String]) -> Result<ExitCode> {
    let updates = match input {
        Some(path) => read_updates(&mut crate::input::open(&path.to_string_lossy())?)?,
        None => {
            let [id, field, value] = args else {
                return Err(Error::invalid("give ID FIELD VALUE or --input"));
            };
            let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.clone()));
            vec![(id.clone(), field.clone(), value)]
        }
    };
    let index = Index::open(index)?;
    let writer = crate::one_off_writer(&index, false)?;
    for (line, (id, field, value)) in updates.iter().enumerate() {
        let at_line = |e: Error| if input.is_some() { e.at_line(line as u64 + 1) } else { e };
        writer.update_numeric(id, field, value, IfCurrent::Any).map_err(at_line)?;
    }
    writer.close()?;
    println!("updated {} value(s)", updates.len());
    Ok(ExitCode::SUCCESS)
}

/// The updates of JSON lines `{"id": ..., "field": ..., "value": ...}`, all
/// read before any is made (a bad line changes nothing).
fn read_updates(input: &mut dyn BufRead) -> Result<Vec<Update>> {
    let mut out = Vec::new();
    for line in crate::input::bounded_lines(input, needle_engine::MAX_LINE_BYTES) {
        let (n, line) = line?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| Error::invalid(reason).at_line(n);
        let mut v: Value = serde_json::from_str(&line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let text = |v: &mut Value, key: &str| match v.get_mut(key).map(Value::take) {
            Some(Value::String(s)) => Ok(s),
            _ => Err(bad(format!("`{key}` must be a string"))),
        };
        let (id, field) = (text(&mut v, "id")?, text(&mut v, "field")?);
        let value = v.get_mut("value").map(Value::take).ok_or_else(|| bad("no `value`".into()))?;
        out.push((id, field, value));
    }
    Ok(out)
}
