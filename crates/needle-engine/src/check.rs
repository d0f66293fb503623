//! Checking an index, as Lucene's CheckIndex does: every file's checksum
//! (whatever opening checked), then every structural invariant of every
//! segment, walking every posting. Opening the index has already read the
//! write-ahead log strictly: a damaged log fails the open, and the report of
//! that failure is the check's.

use std::collections::BTreeMap;

use fst::Streamer;
use needle_codecs::page::PAGE;
use needle_codecs::postings::read_header;
use needle_codecs::{termmap, Postings, SegmentRead, SegmentReader, Verify};
use needle_core::{DocSet, Result, TERMINATED};
use serde::Serialize;

use crate::document::record;
use crate::Index;

#[derive(Debug, Clone, Serialize, Default)]
pub struct CheckReport {
    pub ok: bool,
    /// Live documents (deleted ones not counted).
    pub docs: u64,
    pub segments: usize,
    /// Segments whose documents are in the index sort's order (checked).
    pub sorted_segments: usize,
    pub terms: u64,
    /// Bytes by data kind.
    pub sizes: BTreeMap<String, u64>,
    pub problems: Vec<String>,
}

impl Index {
    /// Verifies the whole index; problems are listed, not raised.
    pub fn check(&self) -> CheckReport {
        let segments = self.segment_readers();
        let mut report = CheckReport { segments: segments.len(), ..Default::default() };
        report.docs = self.num_docs();
        for seg in &segments {
            let checked = SegmentReader::open_with(self.directory(), seg.name(), Verify::Checksums)
                .and_then(|_| check_segment(seg, &mut report));
            if let Err(e) = checked {
                report.problems.push(format!("segment {}: {e}", seg.name()));
            }
        }
        report.ok = report.problems.is_empty();
        report
    }
}

fn add_size(sizes: &mut BTreeMap<String, u64>, kind: &str, bytes: u64) {
    *sizes.entry(kind.to_string()).or_default() += bytes;
}

fn check_segment(seg: &SegmentReader, report: &mut CheckReport) -> Result<()> {
    let name = seg.name().to_string();
    let mut problem = |p: String| report.problems.push(format!("segment {name}: {p}"));
    let meta = seg.meta().clone();
    let mut per_field: BTreeMap<u16, (u64, u64, u64)> = BTreeMap::new();
    let mut sizes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut stream = seg.term_map().stream();
    let (mut positions, mut offsets, mut pairs) = (Vec::new(), Vec::new(), Vec::<(u32, u8)>::new());
    let mut terms = 0u64;
    while let Some((key, entry)) = stream.next() {
        terms += 1;
        let Some((field, term)) = termmap::split_key(key) else {
            problem("term map key without a field".into());
            continue;
        };
        let label = format!("field {field} term {:?}", String::from_utf8_lossy(term));
        let Some(fm) = meta.field(field) else {
            problem(format!("{label}: field missing from the meta"));
            continue;
        };
        let (offset, zone_pages) = termmap::unpack_entry(entry);
        let header = read_header(seg.postings_file(), offset)?;
        let len = header.sizes().searched();
        if len <= PAGE && offset / PAGE != (offset + len - 1) / PAGE {
            problem(format!("{label}: the {len} bytes a search reads of its record straddle a 4 KiB page"));
        }
        if u64::from(zone_pages) != header.sizes().zone().div_ceil(PAGE).min(65535) {
            problem(format!(
                "{label}: term map's prefetch zone ({zone_pages} pages) does not match the record"
            ));
        }
        *sizes.entry("skip").or_default() += header.header_and_skip as u64;
        *sizes.entry("doc_ids_and_freqs").or_default() += header.docs as u64;
        *sizes.entry("positions").or_default() += header.positions as u64;
        *sizes.entry("offsets").or_default() += header.offsets as u64;
        *sizes.entry("bloom").or_default() += header.bloom as u64;
        let mut p = seg.postings_at(entry)?;
        let norms = seg.norms(field);
        let (mut df, mut ttf, mut prev) = (0u64, 0u64, None);
        let mut doc = p.doc();
        while doc != TERMINATED {
            if prev.is_some_and(|q| q >= doc) || doc >= meta.max_doc {
                problem(format!("{label}: doc {doc} out of order or range"));
                break;
            }
            let freq = p.freq();
            let impact = p.impact(doc, doc);
            let norm = norms.map_or(0, |n| n[doc as usize]);
            pairs.clear();
            p.impacts(doc, doc, &mut pairs);
            let bounded = pairs.iter().any(|&(f, n)| f >= freq && (norms.is_none() || n <= norm));
            if freq == 0
                || freq > impact.max_freq
                || !bounded
                || (norms.is_some() && (norm < impact.min_norm || norm == 0))
            {
                problem(format!(
                    "{label}: doc {doc} freq {freq}/norm {norm} outside its block bounds {pairs:?}"
                ));
            }
            if fm.positions {
                p.positions(&mut positions);
                p.offsets(&mut offsets);
                let ordered =
                    positions.windows(2).all(|w| w[0] <= w[1]) && offsets.iter().all(|(s, e)| s <= e);
                if positions.len() != freq as usize || offsets.len() != freq as usize || !ordered {
                    problem(format!(
                        "{label}: doc {doc} positions/offsets do not match its frequency or are out of order"
                    ));
                }
            }
            df += 1;
            ttf += u64::from(freq);
            prev = Some(doc);
            doc = p.advance();
        }
        if let Err(e) = needle_core::read_error::check() {
            problem(format!("{label}: {e}"));
        }
        if df != u64::from(p.doc_freq()) || ttf != header.total_term_freq {
            problem(format!(
                "{label}: header says df {} ttf {}, postings hold {df}/{ttf}",
                p.doc_freq(),
                header.total_term_freq
            ));
        }
        let f = per_field.entry(field).or_default();
        *f = (f.0 + df, f.1 + ttf, f.2 + 1);
    }
    for fm in &meta.fields {
        let (sum_df, sum_ttf, n) = per_field.get(&fm.field).copied().unwrap_or_default();
        if (sum_df, sum_ttf, n) != (fm.stats.sum_doc_freq, fm.stats.sum_total_term_freq, fm.terms) {
            problem(format!("field {}: meta statistics do not match the postings", fm.field));
        }
    }
    let file = format!("{name}.docs");
    for doc in 0..meta.max_doc {
        match seg.stored(doc) {
            Ok(rec) => {
                if let Err(e) = record::decode(&file, &rec) {
                    problem(format!("stored document {doc}: {e}"));
                }
            }
            Err(e) => problem(format!("stored document {doc}: {e}")),
        }
    }
    if let Some(values) = seg.doc_values() {
        for field in values.fields() {
            if let Err(e) = values.verify(field) {
                problem(format!("doc values of field {field}: {e}"));
            }
        }
        add_size(&mut report.sizes, "doc_values", values.byte_len() as u64);
    }
    if let Some(order) = meta.sorted {
        // A segment that says its documents are sorted must hold them so: searches stop early on it.
        let mut column = seg.numeric_values(order.field);
        let keys: Vec<i64> = (0..meta.max_doc)
            .map(|doc| order.key(column.as_mut().map_or(&[][..], |c| c.values(doc))))
            .collect();
        match keys.windows(2).position(|w| !order.in_order(w[0], w[1])) {
            Some(at) => problem(format!(
                "document {} is out of the segment's sort order on field {}",
                at + 1,
                order.field
            )),
            None => report.sorted_segments += 1,
        }
    }
    let (dict, docs, index) = seg.doc_store().sizes();
    report.terms += terms;
    let add = add_size;
    for (k, v) in sizes {
        add(&mut report.sizes, k, v);
    }
    add(&mut report.sizes, "term_map", seg.term_map().as_fst().as_bytes().len() as u64);
    add(
        &mut report.sizes,
        "norms",
        meta.fields.iter().filter(|f| f.norms_index.is_some()).count() as u64 * u64::from(meta.max_doc),
    );
    add(&mut report.sizes, "doc_store", docs);
    add(&mut report.sizes, "doc_store_dictionary", dict);
    add(&mut report.sizes, "doc_store_index", index);
    Ok(())
}
