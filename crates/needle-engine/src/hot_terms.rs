//! The application cache's static part, chosen from a query log (WiSER):
//! the term records with the most queries per page they take are pinned,
//! most valuable first, until the static budget is spent. A record pinned
//! is its prefetch zone (header, skip data and doc/frequency blocks: what
//! every query on the term reads), in every segment.

use std::collections::HashMap;

use needle_codecs::SegmentReader;
use needle_core::{FieldId, Result};
use needle_search::parse_query;
use serde::Serialize;

use crate::schema::Schema;

/// What [`pin_hot_terms`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PinSummary {
    /// Distinct terms in the log's queries (queries that do not parse are skipped).
    pub log_terms: usize,
    pub terms_pinned: usize,
    pub pages_pinned: usize,
}

/// Pins the records of the terms `queries` use most per page, within `budget_bytes`.
pub(crate) fn pin_hot_terms<'a>(
    segments: &[&SegmentReader],
    schema: &Schema,
    queries: impl IntoIterator<Item = &'a str>,
    budget_bytes: usize,
) -> Result<PinSummary> {
    let mut query_freq: HashMap<(FieldId, Vec<u8>), u32> = HashMap::new();
    for q in queries {
        let Ok(query) = parse_query(q, schema) else { continue };
        let mut terms = Vec::new();
        query.terms(&mut terms);
        terms.sort();
        terms.dedup();
        for t in terms {
            *query_freq.entry(t).or_default() += 1;
        }
    }
    let mut ranked: Vec<(f64, (FieldId, Vec<u8>), usize)> = query_freq
        .into_iter()
        .filter_map(|(key, freq)| {
            let pages: usize = segments
                .iter()
                .filter_map(|s| s.term_entry(key.0, &key.1))
                .map(|e| zone_span(e.offset, e.zone_pages))
                .sum();
            (pages > 0).then(|| (f64::from(freq) / pages as f64, key, pages))
        })
        .collect();
    let mut summary = PinSummary { log_terms: ranked.len(), ..PinSummary::default() };
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut left = budget_bytes / needle_codecs::page::PAGE as usize;
    let mut chosen: Vec<(FieldId, &[u8])> = Vec::new();
    for (_, (field, term), pages) in &ranked {
        if *pages <= left {
            left -= pages;
            chosen.push((*field, term));
        }
    }
    summary.terms_pinned = chosen.len();
    // One batch of reads per segment for all the chosen records.
    for s in segments {
        summary.pages_pinned += s.pin_terms(&chosen)?;
    }
    Ok(summary)
}

/// The 4 KiB pages a record's prefetch zone (`zone_pages` long, at `offset`) lies on.
fn zone_span(offset: u64, zone_pages: u16) -> usize {
    let page = needle_codecs::page::PAGE;
    let end = offset + u64::from(zone_pages.max(1)) * page;
    (end.div_ceil(page) - offset / page) as usize
}
