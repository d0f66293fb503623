//! The validation pass: before timing, the engine answers every workload query
//! once in `count` mode; the answers are kept in a file
//! (`ANSWERS_DIR/ENGINE.WORKLOAD.answers.tsv`: category, query, exact hit count,
//! top ids) so that engines run at different times can be compared. Hit counts
//! must agree between all engines; Needle's top-10 ids must equal Lucene's.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::engine::{EngineProcess, Reply};
use crate::util::{create_output, read_lines, Result};

/// One query's answer: exact hit count and top ids, or the engine's error.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Hits { total: u64, ids: Vec<String> },
    Error(String),
}

/// Answers every query once in count mode, up to `window` requests outstanding.
pub fn answer_all(engine: &mut EngineProcess, queries: &[(String, String)], k: usize) -> Result<Vec<Answer>> {
    let base = engine.id_base;
    engine.id_base += queries.len() as u64;
    let window = 64usize;
    let mut out: Vec<Option<Answer>> = vec![None; queries.len()];
    let (mut next, mut done) = (0usize, 0usize);
    while done < queries.len() {
        while next < queries.len() && next - done < window {
            engine.send(base + next as u64, true, k, &queries[next].1)?;
            next += 1;
        }
        engine.flush()?;
        let (id, a) = match engine.recv(Duration::from_secs(600))? {
            Reply::Answer { id, total, ids, .. } => (id, Answer::Hits { total, ids }),
            Reply::Error { id, message, .. } => (id, Answer::Error(message)),
            Reply::Stats(_) => continue,
            Reply::Closed => return Err("the engine exited during validation".into()),
        };
        if id < base || id - base >= queries.len() as u64 {
            continue;
        }
        let slot = &mut out[(id - base) as usize];
        if slot.is_none() {
            *slot = Some(a);
            done += 1;
        }
    }
    Ok(out.into_iter().map(|a| a.unwrap()).collect())
}

pub fn answers_path(dir: &Path, engine: &str, workload: &str) -> PathBuf {
    dir.join(format!("{engine}.{workload}.answers.tsv"))
}

pub fn write_answers(path: &Path, queries: &[(String, String)], answers: &[Answer]) -> Result<()> {
    let mut w = create_output(path)?;
    for ((c, q), a) in queries.iter().zip(answers) {
        match a {
            Answer::Hits { total, ids } => writeln!(w, "{c}\t{q}\t{total}\t{}", ids.join(","))?,
            Answer::Error(m) => writeln!(w, "{c}\t{q}\tERROR\t{}", m.replace(['\t', '\n'], " "))?,
        }
    }
    w.flush()?;
    Ok(())
}

/// Query -> answer, from an answers file.
pub fn read_answers(path: &Path) -> Result<HashMap<String, Answer>> {
    let mut m = HashMap::new();
    for line in read_lines(path)? {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        if f.len() < 3 {
            continue;
        }
        let rest = f.get(3).copied().unwrap_or("");
        let a = if f[2] == "ERROR" {
            Answer::Error(rest.to_string())
        } else {
            let ids = if rest.is_empty() { Vec::new() } else { rest.split(',').map(String::from).collect() };
            Answer::Hits { total: f[2].parse().unwrap_or(0), ids }
        };
        m.insert(f[1].to_string(), a);
    }
    Ok(m)
}

/// How one engine's answers compare with another's.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Comparison {
    pub engine: String,
    pub other: String,
    pub queries: u64,
    pub errors: u64,
    pub count_differs: u64,
    /// Only compared for Needle against Lucene.
    pub top_ids_compared: bool,
    pub top_ids_differ: u64,
    pub examples: Vec<String>,
}

/// Compares `engine`'s answers with every other engine's answers file for the
/// same workload in `dir`, printing where they differ.
pub fn compare_all(dir: &Path, engine: &str, workload: &str) -> Result<Vec<Comparison>> {
    let mine = read_answers(&answers_path(dir, engine, workload))?;
    let suffix = format!(".{workload}.answers.tsv");
    let mut others: Vec<String> = std::fs::read_dir(dir)?
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(&suffix)).map(String::from))
        .filter(|e| e != engine)
        .collect();
    others.sort();
    let mut out = Vec::new();
    for other in others {
        let theirs = read_answers(&answers_path(dir, &other, workload))?;
        let top = (engine == "needle" && other.starts_with("lucene"))
            || (other == "needle" && engine.starts_with("lucene"));
        let mut c = Comparison {
            engine: engine.into(),
            other: other.clone(),
            top_ids_compared: top,
            ..Default::default()
        };
        let mut keys: Vec<&String> = mine.keys().filter(|q| theirs.contains_key(*q)).collect();
        keys.sort();
        for q in keys {
            c.queries += 1;
            match (&mine[q], &theirs[q]) {
                (Answer::Hits { total: a, ids: ia }, Answer::Hits { total: b, ids: ib }) => {
                    if a != b {
                        c.count_differs += 1;
                        if c.examples.len() < 10 {
                            c.examples.push(format!("count {q}: {engine} {a}, {other} {b}"));
                        }
                    }
                    let n = 10.min(ia.len()).min(ib.len());
                    if top && (ia[..n] != ib[..n] || ia.len().min(10) != ib.len().min(10)) {
                        c.top_ids_differ += 1;
                        if c.examples.len() < 10 {
                            c.examples.push(format!(
                                "top-10 {q}: {engine} {:?} / {other} {:?}",
                                &ia[..n],
                                &ib[..n]
                            ));
                        }
                    }
                }
                (Answer::Error(m), _) | (_, Answer::Error(m)) => {
                    c.errors += 1;
                    if c.examples.len() < 10 {
                        c.examples.push(format!("error {q}: {m}"));
                    }
                }
            }
        }
        println!(
            "validation {engine} vs {other} on {workload}: {} queries, hit counts differ on {}, {}errors on {}",
            c.queries,
            c.count_differs,
            if top { format!("top-10 ids differ on {}, ", c.top_ids_differ) } else { String::new() },
            c.errors
        );
        for e in &c.examples {
            println!("  {e}");
        }
        out.push(c);
    }
    Ok(out)
}
