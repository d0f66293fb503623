//! An index: a folder holding a manifest and the segments it names.

use std::collections::{BTreeMap, HashSet};
use std::io::BufRead;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use needle_codecs::{SegmentRead, SegmentReader};
use needle_core::{DocId, DocSet, Error, Result, TERMINATED};
use needle_index::merge_segments;
use needle_search::highlight::{fragments, match_spans, FragmentOptions};
use needle_search::{parse_query, Query, SearchOptions, Searcher, TopDocs};
use needle_storage::Directory;
use serde::Serialize;

use crate::document::{decode_stored, field_text};
use crate::import::{
    delete_segment, open_segments, run_import, ImportOptions, ImportProgress, ImportSummary,
};
use crate::manifest::{self, Manifest, SegmentEntry};
use crate::schema::{Schema, ID_FIELD};

const LOCK_FILE: &str = "write.lock";

pub struct Index {
    dir: Directory,
    manifest: Manifest,
    segments: Vec<Arc<SegmentReader>>,
}

/// What to search for and what to return.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: String,
    pub top_k: usize,
    pub highlight: bool,
    pub track_total_hits: u64,
}

impl SearchRequest {
    pub fn new(query: &str) -> Self {
        SearchRequest { query: query.to_string(), top_k: 10, highlight: false, track_total_hits: 10_000 }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    #[serde(rename = "_id")]
    pub id: String,
    #[serde(rename = "_score")]
    pub score: f32,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub highlight: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    pub took_ms: f64,
    pub total: u64,
    /// "eq", or "gte" when `total` is a lower bound.
    pub total_relation: &'static str,
    pub hits: Vec<Hit>,
}

impl Index {
    /// Opens the index at `path`, creating it when it does not exist. A
    /// mapping given for an existing index must equal the index's.
    pub fn open_or_create(path: &Path, mapping: Option<Schema>) -> Result<Index> {
        let dir = Directory::open(path, true)?;
        if !dir.exists(manifest::FILE) {
            let _lock = dir.lock(LOCK_FILE)?;
            let mut m = Manifest::new(mapping.unwrap_or_default());
            m.commit(&dir)?;
            return Ok(Index { dir, manifest: m, segments: Vec::new() });
        }
        let index = Index::open(path)?;
        if let Some(m) = mapping {
            if m != index.manifest.schema {
                return Err(Error::Schema(format!("{} already has a different mapping", path.display())));
            }
        }
        Ok(index)
    }

    /// Opens an existing index; every file of every segment is verified.
    pub fn open(path: &Path) -> Result<Index> {
        let dir = Directory::open(path, false)?;
        if !dir.exists(manifest::FILE) {
            return Err(Error::Index(format!(
                "{} is not a Needle index (no {})",
                path.display(),
                manifest::FILE
            )));
        }
        let manifest = Manifest::read(&dir)?;
        let names: Vec<String> = manifest.segments.iter().map(|s| s.name.clone()).collect();
        let segments = open_segments(&dir, &names)?;
        Ok(Index { dir, manifest, segments })
    }

    pub fn schema(&self) -> &Schema {
        &self.manifest.schema
    }

    pub fn segments(&self) -> &[Arc<SegmentReader>] {
        &self.segments
    }

    pub fn num_docs(&self) -> u64 {
        self.segments.iter().map(|s| u64::from(s.meta().max_doc)).sum()
    }

    pub fn directory(&self) -> &Directory {
        &self.dir
    }

    /// Adds the documents of `input` (JSON lines) as new segments, committed
    /// together when all are written.
    pub fn import(
        &mut self,
        input: &mut dyn BufRead,
        options: &ImportOptions,
        progress: &ImportProgress,
    ) -> Result<ImportSummary> {
        let _lock = self.dir.lock(LOCK_FILE)?;
        self.manifest = Manifest::read(&self.dir)?;
        self.remove_unreferenced_files()?;
        let schema = RwLock::new(self.manifest.schema.clone());
        let mut next = self.manifest.clone();
        let (created, summary) =
            run_import(&self.dir, &schema, input, &mut || next.new_segment_name(), options, progress)?;
        let opened = match open_segments(&self.dir, &created) {
            Ok(o) => o,
            Err(e) => {
                created.iter().for_each(|n| delete_segment(&self.dir, n));
                return Err(e);
            }
        };
        next.schema = schema.into_inner().unwrap();
        for (name, seg) in created.iter().zip(&opened) {
            next.segments.push(SegmentEntry { name: name.clone(), max_doc: seg.meta().max_doc });
        }
        if let Err(e) = next.commit(&self.dir) {
            created.iter().for_each(|n| delete_segment(&self.dir, n));
            return Err(e);
        }
        self.manifest = next;
        self.segments.extend(opened);
        Ok(summary)
    }

    /// Merges adjacent segments until at most `max_segments` remain. Returns
    /// how many segments were rewritten.
    pub fn merge(&mut self, max_segments: usize) -> Result<usize> {
        let _lock = self.dir.lock(LOCK_FILE)?;
        let groups = plan_merge(&self.manifest.segments, max_segments.max(1));
        if groups.iter().all(|g| g.len() < 2) {
            return Ok(0);
        }
        let mut next = self.manifest.clone();
        next.segments.clear();
        let mut replaced = Vec::new();
        let mut created = Vec::new();
        for group in groups {
            if group.len() == 1 {
                next.segments.push(self.manifest.segments[group[0]].clone());
                continue;
            }
            let name = next.new_segment_name();
            created.push(name.clone());
            let readers: Vec<&SegmentReader> = group.iter().map(|&i| self.segments[i].as_ref()).collect();
            let meta = match merge_segments(&self.dir, &name, &readers) {
                Ok(m) => m,
                Err(e) => {
                    created.iter().for_each(|n| delete_segment(&self.dir, n));
                    return Err(e);
                }
            };
            next.segments.push(SegmentEntry { name, max_doc: meta.max_doc });
            replaced.extend(group.iter().map(|&i| self.manifest.segments[i].name.clone()));
        }
        next.commit(&self.dir)?;
        let names: Vec<String> = next.segments.iter().map(|s| s.name.clone()).collect();
        self.segments = open_segments(&self.dir, &names)?;
        self.manifest = next;
        replaced.iter().for_each(|n| delete_segment(&self.dir, n));
        Ok(replaced.len())
    }

    /// Deletes segment files no commit refers to (left by an interrupted import or merge).
    fn remove_unreferenced_files(&self) -> Result<()> {
        let live: HashSet<&str> = self.manifest.segments.iter().map(|s| s.name.as_str()).collect();
        for file in self.dir.list()? {
            if let Some((stem, _)) = file.split_once('.') {
                if stem.starts_with("seg_") && !live.contains(stem) {
                    self.dir.delete(&file)?;
                }
            }
        }
        Ok(())
    }

    /// Parses a query string against this index's schema.
    pub fn parse(&self, query: &str) -> Result<Query> {
        parse_query(query, &self.manifest.schema)
    }

    /// Runs a parsed query: hits as (segment, document, score).
    pub fn top_docs(&self, query: &Query, options: SearchOptions) -> Result<TopDocs> {
        let segments: Vec<&dyn SegmentRead> =
            self.segments.iter().map(|s| s.as_ref() as &dyn SegmentRead).collect();
        Searcher::new(segments).search(query, options)
    }

    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
        let query = self.parse(&request.query)?;
        let options = SearchOptions { top_k: request.top_k, track_total_hits: request.track_total_hits };
        let top = self.top_docs(&query, options)?;
        let rewritten = query.rewrite();
        let mut hits = Vec::with_capacity(top.hits.len());
        for h in &top.hits {
            let segment = self.segments[h.segment].as_ref();
            let record = segment.stored(h.doc)?;
            let file = format!("{}.docs", segment.name());
            let (id, source) = decode_stored(&file, &record)?;
            let highlight = if request.highlight {
                self.highlight(segment, h.doc, source, &rewritten)?
            } else {
                BTreeMap::new()
            };
            hits.push(Hit { id: id.to_string(), score: h.score, highlight });
        }
        Ok(SearchResponse {
            took_ms: started.elapsed().as_secs_f64() * 1e3,
            total: top.total,
            total_relation: if top.total_is_exact { "eq" } else { "gte" },
            hits,
        })
    }

    fn highlight(
        &self,
        segment: &SegmentReader,
        doc: DocId,
        source: &str,
        query: &Query,
    ) -> Result<BTreeMap<String, Vec<String>>> {
        let spans = match_spans(segment, doc, query)?;
        let mut out = BTreeMap::new();
        if spans.is_empty() {
            return Ok(out);
        }
        let json: serde_json::Value = serde_json::from_str(source).map_err(|e| {
            Error::corrupt(format!("{}.docs", segment.name()), format!("stored source is not JSON: {e}"))
        })?;
        for (field, field_spans) in spans {
            let name = &self.schema().field(field).name;
            if let Some(text) = field_text(&json, name) {
                let f = fragments(&text, &field_spans, &FragmentOptions::default());
                if !f.is_empty() {
                    out.insert(name.clone(), f);
                }
            }
        }
        Ok(out)
    }

    /// The stored JSON source of the document with `_id` `id`.
    pub fn get(&self, id: &str) -> Result<Option<String>> {
        for segment in self.segments.iter().rev() {
            let Some(mut p) = segment.postings(ID_FIELD, id.as_bytes())? else { continue };
            let mut last = p.doc();
            while p.advance() != TERMINATED {
                last = p.doc();
            }
            let record = segment.stored(last)?;
            let file = format!("{}.docs", segment.name());
            return Ok(Some(decode_stored(&file, &record)?.1.to_string()));
        }
        Ok(None)
    }
}

/// Splits consecutive segments into at most `max` groups of similar document counts.
fn plan_merge(segments: &[SegmentEntry], max: usize) -> Vec<Vec<usize>> {
    if segments.len() <= max {
        return (0..segments.len()).map(|i| vec![i]).collect();
    }
    let total: u64 = segments.iter().map(|s| u64::from(s.max_doc)).sum();
    let target = total.div_ceil(max as u64).max(1);
    let mut groups: Vec<Vec<usize>> = vec![Vec::new()];
    let mut size = 0;
    for (i, s) in segments.iter().enumerate() {
        let remaining_segments = segments.len() - i;
        let groups_left = max - groups.len();
        let current = groups.last_mut().unwrap();
        if !current.is_empty()
            && size + u64::from(s.max_doc) > target
            && groups_left > 0
            && remaining_segments > 0
        {
            groups.push(vec![i]);
            size = u64::from(s.max_doc);
        } else {
            current.push(i);
            size += u64::from(s.max_doc);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(sizes: &[u32]) -> Vec<SegmentEntry> {
        sizes.iter().enumerate().map(|(i, &m)| SegmentEntry { name: format!("s{i}"), max_doc: m }).collect()
    }

    #[test]
    fn merge_plan_keeps_order_and_respects_the_maximum() {
        for (sizes, max) in [
            (vec![10, 10, 10, 10], 1),
            (vec![10, 10, 10, 10], 2),
            (vec![1, 100, 1, 1, 50], 3),
            (vec![5; 9], 4),
        ] {
            let groups = plan_merge(&entries(&sizes), max);
            assert!(groups.len() <= max, "{sizes:?} {max}: {groups:?}");
            let flat: Vec<usize> = groups.concat();
            assert_eq!(flat, (0..sizes.len()).collect::<Vec<_>>());
        }
    }
}
