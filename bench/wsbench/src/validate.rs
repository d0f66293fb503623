//! The validation pass: before timing, the engine answers every workload query
//! once in `count` mode; the answers are kept in a file
//! (`ANSWERS_DIR/ENGINE.WORKLOAD.answers.tsv`: category, query, exact hit count,
//! top ids) so that engines run at different times can be compared. Hit counts
//! must agree between all engines; top-10 ids must agree where the two score
//! alike: Needle's with Lucene's (a sum over the fields), and any two servers'
//! (labels ending in `-http`: Elasticsearch's query_string over the fields, a
//! dis-max) with Needle's in-process reading of the same (`-dismax`).

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
    /// `scores` is empty unless the engine sends them.
    Hits {
        total: u64,
        ids: Vec<String>,
        scores: Vec<f32>,
    },
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
            Reply::Answer { id, total, ids, scores, .. } => (id, Answer::Hits { total, ids, scores }),
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
            Answer::Hits { total, ids, scores } if scores.is_empty() => {
                writeln!(w, "{c}\t{q}\t{total}\t{}", ids.join(","))?
            }
            Answer::Hits { total, ids, scores } => {
                let scores: Vec<String> = scores.iter().map(f32::to_string).collect();
                writeln!(w, "{c}\t{q}\t{total}\t{}\t{}", ids.join(","), scores.join(","))?
            }
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
        let f: Vec<&str> = line.splitn(5, '\t').collect();
        if f.len() < 3 {
            continue;
        }
        let rest = f.get(3).copied().unwrap_or("");
        let a = if f[2] == "ERROR" {
            Answer::Error(rest.to_string())
        } else {
            let ids = if rest.is_empty() { Vec::new() } else { rest.split(',').map(String::from).collect() };
            let scores =
                f.get(4).map_or(Vec::new(), |s| s.split(',').filter_map(|x| x.parse().ok()).collect());
            Answer::Hits { total: f[2].parse().unwrap_or(0), ids, scores }
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
    /// Only compared where the two score alike (see [`score_alike`]).
    pub top_ids_compared: bool,
    pub top_ids_differ: u64,
    pub examples: Vec<String>,
}

/// Whether two engines' top-10 ids must agree: Needle and Lucene score a query
/// string alike (the fields summed), and so do two servers given the same
/// request and Needle in-process reading it as they do (labels ending in
/// `-http` or `-dismax`: Elasticsearch's query_string, the fields in a dis-max).
fn score_alike(a: &str, b: &str) -> bool {
    let lucene_pair = |x: &str, y: &str| x == "needle" && y.starts_with("lucene");
    let dismax = |x: &str| x.ends_with("-http") || x.ends_with("-dismax");
    lucene_pair(a, b) || lucene_pair(b, a) || (dismax(a) && dismax(b))
}

/// Whether two top-10s agree: the same ids in the same order, or, when both
/// engines sent scores, the same scores rank by rank with the ids differing
/// only among hits of equal score (engines break ties by their own document
/// order, which a merge may have shuffled).
fn same_top(ia: &[String], sa: &[f32], ib: &[String], sb: &[f32]) -> bool {
    let n = 10.min(ia.len()).min(ib.len());
    if ia.len().min(10) != ib.len().min(10) {
        return false;
    }
    if ia[..n] == ib[..n] {
        return true;
    }
    if sa.len() < n || sb.len() < n {
        return false;
    }
    let close = |x: f32, y: f32| (x - y).abs() <= 1e-5 * x.abs().max(y.abs()).max(1.0);
    if (0..n).any(|i| !close(sa[i], sb[i])) {
        return false;
    }
    // An id ranked by one engine must sit at the same score in the other's
    // list, unless that score ties the last rank (the tie may run past it).
    let holds = |ids: &[String], scores: &[f32], other: &[String], other_scores: &[f32]| {
        (0..n).all(|i| {
            close(scores[i], scores[n - 1])
                || (0..n).any(|j| other[j] == ids[i] && close(other_scores[j], scores[i]))
        })
    };
    holds(ia, sa, ib, sb) && holds(ib, sb, ia, sa)
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
        let top = score_alike(engine, &other);
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
                (
                    Answer::Hits { total: a, ids: ia, scores: sa },
                    Answer::Hits { total: b, ids: ib, scores: sb },
                ) => {
                    if a != b {
                        c.count_differs += 1;
                        if c.examples.len() < 10 {
                            c.examples.push(format!("count {q}: {engine} {a}, {other} {b}"));
                        }
                    }
                    let n = 10.min(ia.len()).min(ib.len());
                    if top && !same_top(ia, sa, ib, sb) {
                        c.top_ids_differ += 1;
                        if c.examples.len() < 10 {
                            c.examples.push(format!(
                                "top-10 {q}: {engine} {:?} / {other} {:?} (scores {sa:?} / {sb:?})",
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

#[cfg(test)]
mod tests {
    use super::same_top;

    fn ids(s: &str) -> Vec<String> {
        s.split(',').map(String::from).collect()
    }

    #[test]
    fn top_tens_agree_up_to_ties_of_equal_score() {
        let scores = [3.0, 2.0, 2.0, 1.0, 1.0];
        // The two hits at 2.0 swapped; the last rank's tie resolved to another document.
        assert!(same_top(&ids("a,b,c,d,e"), &scores, &ids("a,c,b,d,x"), &scores));
        // Identical lists need no scores.
        assert!(same_top(&ids("a,b"), &[], &ids("a,b"), &[]));
    }

    #[test]
    fn top_tens_differ_when_a_hit_moves_across_scores_or_scores_differ() {
        let scores = [3.0, 2.0, 2.0, 1.0];
        // `x` replaces `b` at a score that is not the last rank's.
        assert!(!same_top(&ids("a,b,c,d"), &scores, &ids("a,x,c,d"), &scores));
        // The same ids, but the engines score them differently.
        assert!(!same_top(&ids("a,b,c,d"), &scores, &ids("a,c,b,d"), &[3.0, 2.5, 2.0, 1.0]));
        // Without scores a swap is a difference.
        assert!(!same_top(&ids("a,b"), &[], &ids("b,a"), &[]));
    }
}
