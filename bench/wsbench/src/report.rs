//! `report`: reads every result JSON under a folder (from `run`, `capacity` and
//! `realtime`) and writes report.md with tables (QPS and latency per workload
//! category per engine, storage bytes per query, validation, capacity, real
//! time) and SVG plots drawn
//! by `charts.rs`: QPS per category per engine, latency
//! percentiles against offered load, storage bytes per query against the memory
//! limit (the shape of WiSER's Figure 19).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::charts::{self, Unit};
use crate::realtime::RealtimeResult;
use crate::run::RunResult;
use crate::util::Result;

/// Every result under `dir`: `run` and `capacity` results, and `realtime` ones.
#[derive(Default)]
struct Results {
    runs: Vec<(PathBuf, RunResult)>,
    realtime: Vec<(PathBuf, RealtimeResult)>,
}

fn collect(dir: &Path, out: &mut Results) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&p)?;
            if let Ok(r) = serde_json::from_str::<RunResult>(&text) {
                out.runs.push((p, r));
            } else if let Ok(r) = serde_json::from_str::<RealtimeResult>(&text) {
                out.realtime.push((p, r));
            }
        }
    }
    Ok(())
}

/// The real-time table: one row per result, in file order.
fn realtime_section(md: &mut String, results: &[(PathBuf, RealtimeResult)]) -> Result<()> {
    writeln!(
        md,
        "## Real time: queries while documents are added
"
    )?;
    writeln!(
        md,
        "Visibility: acknowledgement of an add to the first `id` probe that finds the document. \
         Query latency (open loop, from scheduled arrival) idle before the ingestion, during it, and idle after it.\n"
    )?;
    writeln!(
        md,
        "| engine | docs | offered docs/s | docs/s | visibility p50 ms | p99 ms | probe rtt p50 ms | queries/s | idle p50 / p95 / p99 ms | ingesting p50 / p95 / p99 ms | after p50 / p95 / p99 ms |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|---|---|"
    )?;
    let lat = |p: &crate::realtime::PhaseResult| {
        let l = &p.latency;
        format!("{:.2} / {:.2} / {:.2}", l.p50_ms, l.p95_ms, l.p99_ms)
    };
    for (_, r) in results {
        let offered = if r.ingest_rate > 0.0 { format!("{:.0}", r.ingest_rate) } else { "max".into() };
        writeln!(
            md,
            "| {} | {} | {offered} | {:.0} | {:.3} | {:.3} | {:.3} | {:.0} | {} | {} | {} |",
            r.label,
            r.docs,
            r.ingest_docs_per_sec,
            r.visibility.p50_ms,
            r.visibility.p99_ms,
            r.probe_rtt.p50_ms,
            r.offered_rate,
            lat(&r.idle_before),
            lat(&r.ingesting),
            lat(&r.idle_after)
        )?;
    }
    writeln!(md)?;
    Ok(())
}

fn condition(r: &RunResult) -> String {
    let mem = r.mem_limit.map_or("in memory".to_string(), |m| format!("memory limit {} MB", m >> 20));
    let load = match r.categories.first() {
        Some(c) if r.mode == "closed" => format!("closed loop, {} outstanding", c.load.clients),
        Some(c) => format!("open loop, {:.0} queries/s offered", c.load.offered_rate),
        None => r.mode.clone(),
    };
    format!(
        "{mem}, {load}, {} engine thread(s){}",
        r.threads,
        if r.drop_caches { ", caches dropped" } else { "" }
    )
}

fn mem_mb(r: &RunResult) -> String {
    r.mem_limit.map_or("-".to_string(), |m| (m >> 20).to_string())
}

pub fn write(results: &Path, out: &Path) -> Result<()> {
    let mut found = Results::default();
    collect(results, &mut found)?;
    let Results { runs: all, realtime } = found;
    if all.is_empty() && realtime.is_empty() {
        return Err(format!("no result JSON files under {}", results.display()).into());
    }
    std::fs::create_dir_all(out)?;
    let mut md = String::new();
    writeln!(md, "# WSBench report\n")?;
    writeln!(md, "{} result files from `{}`.\n", all.len() + realtime.len(), results.display())?;
    if !realtime.is_empty() {
        realtime_section(&mut md, &realtime)?;
    }

    // QPS and latency tables, one per workload and condition.
    let runs: Vec<&RunResult> = all.iter().map(|(_, r)| r).filter(|r| r.kind == "run").collect();
    let mut groups: BTreeMap<(String, String), Vec<&RunResult>> = BTreeMap::new();
    for r in &runs {
        groups.entry((r.workload.clone(), condition(r))).or_default().push(r);
    }
    if !groups.is_empty() {
        writeln!(md, "## Throughput and latency per workload\n")?;
    }
    for (gi, ((workload, cond), rs)) in groups.iter().enumerate() {
        writeln!(md, "### {workload}: {cond}\n")?;
        let labels: Vec<String> =
            rs.iter().map(|r| r.label.clone()).collect::<BTreeSet<_>>().into_iter().collect();
        let mut cats: Vec<String> = Vec::new();
        for r in rs {
            for c in &r.categories {
                if !cats.contains(&c.category) {
                    cats.push(c.category.clone());
                }
            }
        }
        let mut head = "| category |".to_string();
        let mut rule = "|---|".to_string();
        for l in &labels {
            write!(head, " {l} QPS | p50 ms | p99 ms | read B/q |")?;
            rule.push_str("---:|---:|---:|---:|");
        }
        writeln!(md, "{head}\n{rule}")?;
        let mut qps: Vec<Vec<f64>> = vec![vec![0.0; cats.len()]; labels.len()];
        for (ci, cat) in cats.iter().enumerate() {
            let mut row = format!("| {cat} |");
            for (li, l) in labels.iter().enumerate() {
                let found = rs
                    .iter()
                    .filter(|r| &r.label == l)
                    .flat_map(|r| r.categories.iter())
                    .find(|c| &c.category == cat);
                match found {
                    Some(c) => {
                        qps[li][ci] = c.load.qps;
                        write!(
                            row,
                            " {:.1} | {:.3} | {:.3} | {:.0} |",
                            c.load.qps,
                            c.load.latency.p50_ms,
                            c.load.latency.p99_ms,
                            c.load.read_bytes_per_query
                        )?
                    }
                    None => row.push_str(" - | - | - | - |"),
                }
            }
            writeln!(md, "{row}")?;
        }
        let svg = format!("qps_{gi}.svg");
        charts::qps_dots(&out.join(&svg), &format!("{workload}: {cond}"), &cats, &labels, &qps)?;
        writeln!(md, "\n![QPS per category]({svg})\n")?;
    }

    // Storage bytes per query against the memory limit.
    let limited: Vec<&&RunResult> = runs.iter().filter(|r| r.mem_limit.is_some()).collect();
    if !limited.is_empty() {
        writeln!(md, "## Storage reads per query against the memory limit\n")?;
        writeln!(md, "| engine | workload | category | memory MB | read B/q | QPS | p99 ms |\n|---|---|---|---:|---:|---:|---:|")?;
        let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for r in &limited {
            for c in &r.categories {
                writeln!(
                    md,
                    "| {} | {} | {} | {} | {:.0} | {:.1} | {:.3} |",
                    r.label,
                    r.workload,
                    c.category,
                    mem_mb(r),
                    c.load.read_bytes_per_query,
                    c.load.qps,
                    c.load.latency.p99_ms
                )?;
                let mb = (r.mem_limit.unwrap() >> 20) as f64;
                series
                    .entry(format!("{} {}", r.label, c.category))
                    .or_default()
                    .push((mb, c.load.read_bytes_per_query.max(1.0)));
            }
        }
        for v in series.values_mut() {
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        charts::log_lines(
            &out.join("bytes_vs_memory.svg"),
            "storage bytes read per query vs memory limit",
            ("memory limit", Unit::Megabytes),
            ("bytes read per query", Unit::Bytes),
            &series,
        )?;
        writeln!(md, "\n![bytes per query vs memory](bytes_vs_memory.svg)\n")?;
    }

    needed_by_kind_section(&mut md, out, &runs)?;

    // Capacity: latency percentiles against offered load.
    let caps: Vec<&RunResult> = all.iter().map(|(_, r)| r).filter(|r| r.kind == "capacity").collect();
    if !caps.is_empty() {
        writeln!(md, "## Capacity: response time against offered load\n")?;
        writeln!(md, "| engine | workload | memory MB | threads | p99 bound ms | capacity (queries/s) |\n|---|---|---:|---:|---:|---:|")?;
        let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for r in &caps {
            writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                r.label,
                r.workload,
                mem_mb(r),
                r.threads,
                r.p99_bound_ms.unwrap_or(0.0),
                r.capacity_qps.map_or("below the first rate".to_string(), |q| format!("{q:.1}"))
            )?;
            for c in &r.categories {
                let x = c.load.offered_rate;
                let l = &c.load.latency;
                for (name, v) in [("p50", l.p50_ms), ("p99", l.p99_ms), ("p99.9", l.p999_ms)] {
                    series
                        .entry(format!("{} {} {name}", r.label, r.workload))
                        .or_default()
                        .push((x, v.max(0.001)));
                }
            }
        }
        charts::log_lines(
            &out.join("latency_vs_load.svg"),
            "response time percentiles vs offered load",
            ("offered load, queries/s", Unit::Count),
            ("latency", Unit::Millis),
            &series,
        )?;
        writeln!(md, "\n![latency vs offered load](latency_vs_load.svg)\n")?;
    }

    // Validation.
    let mut vrows = BTreeSet::new();
    for (_, r) in &all {
        for v in &r.validation {
            vrows.insert(format!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                r.workload,
                v.engine,
                v.other,
                v.queries,
                v.count_differs,
                if v.top_ids_compared { v.top_ids_differ.to_string() } else { "-".into() },
                v.errors
            ));
        }
    }
    if !vrows.is_empty() {
        writeln!(md, "## Validation (answers compared before timing)\n")?;
        writeln!(md, "| workload | engine | other | queries | hit counts differ | top-10 ids differ | errors |\n|---|---|---|---:|---:|---:|---:|")?;
        for row in vrows {
            writeln!(md, "{row}")?;
        }
        writeln!(md)?;
    }
    writeln!(md, "## Result files\n")?;
    for (p, r) in &all {
        writeln!(md, "- `{}`: {} {} on {} ({})", p.display(), r.kind, r.label, r.workload, condition(r))?;
    }
    for (p, r) in &realtime {
        writeln!(md, "- `{}`: realtime {} ({} docs added)", p.display(), r.label, r.docs)?;
    }
    std::fs::write(out.join("report.md"), md)?;
    eprintln!("wrote {}", out.join("report.md").display());
    Ok(())
}

/// Bytes needed per query by data kind (WiSER's Figures 7 and 10), from the
/// engine's cumulative STATS after each category (Needle with `--read-stats`):
/// the difference between consecutive categories over the queries answered in
/// between (warm-up queries of the same category included).
fn needed_by_kind_section(md: &mut String, out: &Path, runs: &[&RunResult]) -> Result<()> {
    let mut rows = Vec::new();
    let mut kinds = BTreeSet::new();
    for r in runs {
        let (mut prev_needed, mut prev_queries) = (BTreeMap::<String, u64>::new(), 0u64);
        for c in &r.categories {
            let Some(needed) = c.engine_stats.get("needed_bytes").and_then(|v| v.as_object()) else {
                continue;
            };
            let queries = c.engine_stats.get("queries").and_then(|v| v.as_u64()).unwrap_or(0);
            let n = queries.saturating_sub(prev_queries).max(1) as f64;
            let mut per_query = BTreeMap::new();
            for (kind, v) in needed {
                let total = v.as_u64().unwrap_or(0);
                let delta = total.saturating_sub(prev_needed.get(kind).copied().unwrap_or(0));
                per_query.insert(kind.clone(), delta as f64 / n);
                prev_needed.insert(kind.clone(), total);
                kinds.insert(kind.clone());
            }
            prev_queries = queries;
            if per_query.values().any(|v| *v > 0.0) {
                let read = c.load.read_bytes_per_query;
                rows.push((
                    r.label.clone(),
                    r.workload.clone(),
                    mem_mb(r),
                    c.category.clone(),
                    per_query,
                    read,
                ));
            }
        }
    }
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(md, "## Bytes needed per query by data kind\n")?;
    writeln!(md, "Read amplification: storage bytes read per query (the timed phase) over bytes needed.\n")?;
    let kinds: Vec<String> = kinds.into_iter().collect();
    writeln!(
        md,
        "| engine | workload | memory MB | category | {} | total | storage read | read amplification |",
        kinds.join(" | ")
    )?;
    writeln!(md, "|---|---|---:|---|{}---:|---:|---:|", "---:|".repeat(kinds.len()))?;
    let mut bars: BTreeMap<String, Vec<(String, Vec<f64>)>> = BTreeMap::new();
    for (label, workload, mem, cat, per_query, read) in rows {
        let values: Vec<f64> = kinds.iter().map(|k| per_query.get(k).copied().unwrap_or(0.0)).collect();
        let cells: Vec<String> = values.iter().map(|v| format!("{v:.0}")).collect();
        let total: f64 = values.iter().sum();
        let amplification = read / total.max(1.0);
        writeln!(
            md,
            "| {label} | {workload} | {mem} | {cat} | {} | {total:.0} | {read:.0} | {amplification:.2} |",
            cells.join(" | ")
        )?;
        bars.entry(workload).or_default().push((format!("{label} {mem} MB {cat}"), values));
    }
    writeln!(md)?;
    for (i, (workload, bars)) in bars.iter().enumerate() {
        let svg = format!("needed_by_kind_{i}.svg");
        charts::stacked_bytes(
            &out.join(&svg),
            &format!("bytes needed per query by data kind: {workload}"),
            bars,
            &kinds,
        )?;
        writeln!(md, "![bytes needed per query by kind, {workload}]({svg})\n")?;
    }
    Ok(())
}
