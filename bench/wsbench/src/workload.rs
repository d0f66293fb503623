//! Workloads: plain-text files, one query a line as `CATEGORY<TAB>QUERY` (like
//! luceneutil's task files; `#` starts a comment), and their generation.
//!
//! From a Needle index (document frequencies from `Index::dump_terms`, a term's
//! df taken as the larger of its title and body df): single-term queries at df
//! near 10, 100, ..., 100,000; two-term OR and AND queries with the levels
//! crossed; phrase queries of a term with df > 10,000 and a second term of rising
//! df (pairs seen next to each other in a corpus sample when one is given, so the
//! phrases occur), printing how often the pair forms a phrase (phrase hits / AND
//! hits, counted on the index). From real query logs (TREC Terabyte `qid:query`,
//! MS MARCO `qid<TAB>query`): single-term, multi-term and phrase sub-workloads.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use needle_engine::{Index, SearchRequest};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::util::{create_output, for_each_word, read_lines, Result};

pub const LEVELS: [u64; 5] = [10, 100, 1_000, 10_000, 100_000];

/// A workload: queries in file order, each with its category.
pub struct Workload {
    pub name: String,
    pub queries: Vec<(String, String)>,
}

impl Workload {
    pub fn read(path: &Path) -> Result<Workload> {
        let mut queries = Vec::new();
        for (i, line) in read_lines(path)?.into_iter().enumerate() {
            if line.starts_with('#') {
                continue;
            }
            let Some((cat, q)) = line.split_once('\t') else {
                return Err(format!("{}:{}: expected CATEGORY<TAB>QUERY", path.display(), i + 1).into());
            };
            queries.push((cat.trim().to_string(), q.trim().to_string()));
        }
        if queries.is_empty() {
            return Err(format!("{}: no queries", path.display()).into());
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let name = name.trim_end_matches(".gz").trim_end_matches(".txt").to_string();
        Ok(Workload { name, queries })
    }

    /// Categories in order of first appearance, each with its queries.
    pub fn categories(&self) -> Vec<(String, Vec<String>)> {
        let mut order: Vec<String> = Vec::new();
        let mut by: HashMap<String, Vec<String>> = HashMap::new();
        for (c, q) in &self.queries {
            if !by.contains_key(c) {
                order.push(c.clone());
            }
            by.entry(c.clone()).or_default().push(q.clone());
        }
        order
            .into_iter()
            .map(|c| {
                let qs = by.remove(&c).unwrap();
                (c, qs)
            })
            .collect()
    }
}

pub struct GenOptions {
    pub index: PathBuf,
    pub out_dir: PathBuf,
    pub per_category: usize,
    pub seed: u64,
    /// A corpus sample for word pairs (phrase workload).
    pub corpus: Option<PathBuf>,
    pub corpus_docs: u64,
    pub queries_dir: Option<PathBuf>,
    pub max_real: usize,
}

fn level_name(l: u64) -> String {
    match l {
        l if l >= 1_000_000 && l % 1_000_000 == 0 => format!("{}m", l / 1_000_000),
        l if l >= 1_000 && l % 1_000 == 0 => format!("{}k", l / 1_000),
        l => l.to_string(),
    }
}

/// Document frequency per plain term (ASCII letters only, two or more), the
/// larger of its title and body df.
fn term_dfs(index: &Index) -> Result<HashMap<String, u64>> {
    let mut buf = Vec::new();
    index.dump_terms(&mut buf)?;
    let mut df: HashMap<String, u64> = HashMap::new();
    for line in buf.split(|&b| b == b'\n') {
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let mut f = line.split(|&b| b == b'\t');
        let (Some(field), Some(term), Some(d)) = (f.next(), f.next(), f.next()) else { continue };
        if field != b"title" && field != b"body" {
            continue;
        }
        if term.len() < 2 || !term.iter().all(|b| b.is_ascii_lowercase()) {
            continue;
        }
        let d: u64 = std::str::from_utf8(d).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
        let term = String::from_utf8_lossy(term).into_owned();
        let e = df.entry(term).or_insert(0);
        *e = (*e).max(d);
    }
    Ok(df)
}

/// Up to `n` terms with df within a factor 2 of `level` (the closest ones when none is).
fn pick_level(sorted: &[(u64, String)], level: u64, n: usize, rng: &mut StdRng) -> Vec<(u64, String)> {
    let mut within: Vec<(u64, String)> =
        sorted.iter().filter(|(d, _)| *d * 2 >= level && *d <= level * 2).cloned().collect();
    if within.is_empty() {
        return Vec::new();
    }
    within.shuffle(rng);
    within.truncate(n);
    within
}

fn count(index: &Index, q: &str) -> u64 {
    let mut r = SearchRequest::new(q);
    r.top_k = 1;
    r.track_total_hits = u64::MAX;
    index.searcher().search(&r).map(|r| r.total).unwrap_or(0)
}

fn write_workload(path: &Path, header: &str, lines: &[(String, String)]) -> Result<()> {
    let mut w = create_output(path)?;
    writeln!(w, "# {header}")?;
    for (c, q) in lines {
        writeln!(w, "{c}\t{q}")?;
    }
    w.flush()?;
    eprintln!("wrote {} ({} queries)", path.display(), lines.len());
    Ok(())
}

pub fn generate(o: &GenOptions) -> Result<()> {
    let index = Index::open(&o.index)?;
    let mut rng = StdRng::seed_from_u64(o.seed);
    let header = format!("needle-bench workload from {} (seed {})", o.index.display(), o.seed);
    let dfs = term_dfs(&index)?;
    let mut sorted: Vec<(u64, String)> = dfs.iter().map(|(t, &d)| (d, t.clone())).collect();
    sorted.sort();
    eprintln!("{} plain terms; the most frequent has df {}", sorted.len(), sorted.last().map_or(0, |x| x.0));

    // Single-term.
    let mut levels: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    let mut single = Vec::new();
    println!("single-term levels:");
    for &l in &LEVELS {
        let terms = pick_level(&sorted, l, o.per_category, &mut rng);
        if terms.is_empty() {
            println!("  df ~{l:>7}: no terms within a factor 2 (skipped)");
            continue;
        }
        let mut d: Vec<u64> = terms.iter().map(|t| t.0).collect();
        d.sort();
        println!("  df ~{l:>7}: {:>6} terms, median df {}", terms.len(), d[d.len() / 2]);
        for (_, t) in &terms {
            single.push((format!("term_{}", level_name(l)), t.clone()));
        }
        levels.insert(l, terms);
    }
    write_workload(&o.out_dir.join("single.txt"), &header, &single)?;

    // Two-term, levels crossed.
    let mut two = Vec::new();
    let lv: Vec<u64> = levels.keys().copied().collect();
    for (i, &a) in lv.iter().enumerate() {
        for &b in &lv[i..] {
            let (ta, tb) = (&levels[&a], &levels[&b]);
            let mut pairs = Vec::new();
            for _ in 0..o.per_category * 4 {
                if pairs.len() >= o.per_category {
                    break;
                }
                let x = &ta[rng.gen_range(0..ta.len())].1;
                let y = &tb[rng.gen_range(0..tb.len())].1;
                if x != y {
                    pairs.push((x.clone(), y.clone()));
                }
            }
            let name = format!("{}_{}", level_name(a), level_name(b));
            for (x, y) in &pairs {
                two.push((format!("or_{name}"), format!("{x} {y}")));
            }
            for (x, y) in &pairs {
                two.push((format!("and_{name}"), format!("+{x} +{y}")));
            }
        }
    }
    write_workload(&o.out_dir.join("two.txt"), &header, &two)?;

    // Phrase: a first term with df > 10,000, a second of rising df.
    let mut firsts: HashSet<&str> =
        sorted.iter().filter(|(d, _)| *d > 10_000).map(|(_, t)| t.as_str()).collect();
    if firsts.is_empty() {
        println!("phrase: no term has df > 10,000: the first terms are the 20 most frequent instead");
        firsts = sorted.iter().rev().take(20).map(|(_, t)| t.as_str()).collect();
    }
    let mut phrase = Vec::new();
    {
        let mut follows: HashMap<(String, String), u32> = HashMap::new();
        if let Some(corpus) = &o.corpus {
            let mut buf = String::new();
            crate::corpus::for_each_doc(corpus, Some(o.corpus_docs), |d| {
                for text in [&d.title, &d.body] {
                    let mut prev: Option<String> = None;
                    for_each_word(text, &mut buf, |w| {
                        if let Some(p) = prev.take() {
                            if firsts.contains(p.as_str()) && dfs.contains_key(w) {
                                *follows.entry((p, w.to_string())).or_insert(0) += 1;
                            }
                        }
                        prev = Some(w.to_string());
                    });
                }
            })?;
        }
        let first_list: Vec<&str> = {
            let mut v: Vec<&str> = firsts.iter().copied().collect();
            v.sort();
            v
        };
        println!("phrase levels (first term df > 10,000; P(phrase) = phrase hits / AND hits):");
        for &l in &LEVELS {
            let in_level = |t: &str| dfs.get(t).is_some_and(|&d| d * 2 >= l && d <= l * 2);
            let mut pairs: Vec<(String, String)> = if follows.is_empty() {
                let seconds = levels.get(&l).cloned().unwrap_or_default();
                (0..o.per_category)
                    .filter(|_| !seconds.is_empty())
                    .map(|_| {
                        let a = first_list[rng.gen_range(0..first_list.len())].to_string();
                        (a, seconds[rng.gen_range(0..seconds.len())].1.clone())
                    })
                    .filter(|(a, b)| a != b)
                    .collect()
            } else {
                let mut v: Vec<(String, String)> =
                    follows.keys().filter(|(a, b)| a != b && in_level(b)).cloned().collect();
                v.sort();
                v.shuffle(&mut rng);
                v.truncate(o.per_category);
                v
            };
            pairs.sort();
            pairs.dedup();
            if pairs.is_empty() {
                println!("  second df ~{l:>7}: no pairs (skipped)");
                continue;
            }
            let (mut ph, mut both) = (0u64, 0u64);
            for (a, b) in pairs.iter().take(200) {
                ph += count(&index, &format!("\"{a} {b}\""));
                both += count(&index, &format!("+{a} +{b}"));
            }
            println!(
                "  second df ~{l:>7}: {:>6} pairs, P(phrase) = {:.3} ({ph} phrase hits / {both} AND hits, first {} pairs)",
                pairs.len(),
                if both == 0 { 0.0 } else { ph as f64 / both as f64 },
                pairs.len().min(200)
            );
            for (a, b) in pairs {
                phrase.push((format!("phrase_{}", level_name(l)), format!("\"{a} {b}\"")));
            }
        }
    }
    write_workload(&o.out_dir.join("phrase.txt"), &header, &phrase)?;

    if let Some(dir) = &o.queries_dir {
        let real = realistic(dir, o.max_real, &mut rng)?;
        write_workload(
            &o.out_dir.join("realistic.txt"),
            &format!("real queries from {}", dir.display()),
            &real,
        )?;
    }
    Ok(())
}

/// Lowercases and keeps letters and digits (everything else separates words).
fn normalize(q: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut buf = String::new();
    for_each_word(q, &mut buf, |w| words.push(w.to_string()));
    words
}

/// The realistic workload, split into `real_term` (one word), `real_or` (several
/// words, OR), `real_and` (two to four words, all required) and `real_phrase`
/// (the same two to four words, as a phrase).
pub fn realistic(dir: &Path, max: usize, rng: &mut StdRng) -> Result<Vec<(String, String)>> {
    let mut seen = HashSet::new();
    let mut all: Vec<Vec<String>> = Vec::new();
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir)?.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
    entries.sort();
    for path in entries {
        for line in read_lines(&path)? {
            let q = if let Some((_, q)) = line.split_once('\t') {
                q
            } else if let Some((_, q)) = line.split_once(':') {
                q
            } else {
                continue;
            };
            let words = normalize(q);
            if !words.is_empty() && seen.insert(words.join(" ")) {
                all.push(words);
            }
        }
    }
    all.shuffle(rng);
    let (mut term, mut or, mut and, mut phrase) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for w in &all {
        if w.len() == 1 {
            term.push(("real_term".to_string(), w[0].clone()));
        } else {
            or.push(("real_or".to_string(), w.join(" ")));
            if w.len() <= 4 {
                let required: Vec<String> = w.iter().map(|t| format!("+{t}")).collect();
                and.push(("real_and".to_string(), required.join(" ")));
                phrase.push(("real_phrase".to_string(), format!("\"{}\"", w.join(" "))));
            }
        }
    }
    println!(
        "realistic: {} distinct queries: {} single-term, {} multi-term, {} conjunctions and phrases (2-4 words)",
        all.len(),
        term.len(),
        or.len(),
        phrase.len()
    );
    for v in [&mut term, &mut or, &mut and, &mut phrase] {
        v.truncate(max);
    }
    Ok(term.into_iter().chain(or).chain(and).chain(phrase).collect())
}
