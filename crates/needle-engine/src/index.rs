//! An index: a folder holding a manifest and the segments it names.

use std::collections::HashSet;
use std::io::BufRead;
use std::path::Path;
use std::sync::{Arc, RwLock};

use needle_codecs::{SegmentRead, SegmentReader, Verify};
use needle_core::{Deletes, Error, Result};
use needle_index::merge_segments;
use needle_search::{parse_query, Query, SearchOptions, Searcher, TopDocs};
use needle_storage::cache::CacheStats;
use needle_storage::{Directory, ReadOptions};

use crate::deletes::DeleteBits;
use crate::import::{
    delete_segment, open_segments, open_segments_with, run_import, ImportOptions, ImportProgress,
    ImportSummary,
};
use crate::manifest::{self, Manifest, SegmentEntry};
use crate::result_cache::ResultCache;
use crate::schema::Schema;
use crate::search::{find_id, run_search, stored_document, SearchRequest, SearchResponse};

const LOCK_FILE: &str = "write.lock";

pub struct Index {
    dir: Directory,
    manifest: Manifest,
    segments: Vec<Arc<SegmentReader>>,
    /// Deletions of each segment (by position), when it has any.
    deletes: Vec<Option<DeleteBits>>,
    /// Moves on with every import and merge: the result cache's key (see [`ResultCache`]).
    generation: u64,
    results: Option<ResultCache>,
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
            return Ok(Index::new(dir, m, Vec::new(), Vec::new()));
        }
        let index = Index::open(path)?;
        if let Some(m) = mapping {
            if m != index.manifest.schema {
                return Err(Error::invalid(format!("{} already has a different mapping", path.display())));
            }
        }
        Ok(index)
    }

    /// Opens an existing index; every file of every segment is verified.
    pub fn open(path: &Path) -> Result<Index> {
        Index::open_with(path, Verify::Checksums)
    }

    /// Opens an existing index, checking its segments as much as `verify` says
    /// ([`Verify::Footers`] for an index much larger than memory).
    pub fn open_with(path: &Path, verify: Verify) -> Result<Index> {
        Index::open_with_reads(path, verify, ReadOptions::default())
    }

    /// [`Index::open_with`], its files read as `reads` says (a storage
    /// backend and an application cache); segments merged later are read the same way.
    pub fn open_with_reads(path: &Path, verify: Verify, reads: ReadOptions) -> Result<Index> {
        let dir = Directory::open(path, false)?.with_reads(reads);
        if !dir.exists(manifest::FILE) {
            return Err(Error::not_found(format!(
                "Needle index at {} (no {})",
                path.display(),
                manifest::FILE
            )));
        }
        let manifest = Manifest::read(&dir)?;
        let names: Vec<String> = manifest.segments.iter().map(|s| s.name.clone()).collect();
        let segments = open_segments_with(&dir, &names, verify)?;
        let deletes = read_deletes(&dir, &manifest.segments)?;
        Ok(Index::new(dir, manifest, segments, deletes))
    }

    fn new(
        dir: Directory,
        manifest: Manifest,
        segments: Vec<Arc<SegmentReader>>,
        deletes: Vec<Option<DeleteBits>>,
    ) -> Index {
        Index { dir, manifest, segments, deletes, generation: 0, results: None }
    }

    /// Keeps up to `budget_bytes` of search responses (0: none); see [`ResultCache`].
    pub fn set_result_cache(&mut self, budget_bytes: usize) {
        self.results = (budget_bytes > 0).then(|| ResultCache::new(budget_bytes));
    }

    /// Pins in the application cache's static part the term records that
    /// `queries` (a query log) use most per page, within `budget_bytes` (at
    /// most half the cache). Nothing happens for an index read without an
    /// application cache (a mapping is cached by the kernel).
    pub fn pin_hot_terms<'a>(
        &self,
        queries: impl IntoIterator<Item = &'a str>,
        budget_bytes: usize,
    ) -> Result<crate::PinSummary> {
        let segments: Vec<&SegmentReader> = self.segments.iter().map(|s| s.as_ref()).collect();
        crate::hot_terms::pin_hot_terms(&segments, self.schema(), queries, budget_bytes)
    }

    /// The application cache's counters, when the index is read through one.
    pub fn page_cache_stats(&self) -> Option<CacheStats> {
        self.dir.reads().cache.as_ref().map(|c| c.stats())
    }

    /// The result cache's counters, when there is one.
    pub fn result_cache_stats(&self) -> Option<CacheStats> {
        self.results.as_ref().map(ResultCache::stats)
    }

    pub fn schema(&self) -> &Schema {
        &self.manifest.schema
    }

    pub fn segments(&self) -> &[Arc<SegmentReader>] {
        &self.segments
    }

    /// Live documents: all documents minus the deleted ones.
    pub fn num_docs(&self) -> u64 {
        let all: u64 = self.segments.iter().map(|s| u64::from(s.meta().max_doc)).sum();
        all - self.deletes.iter().flatten().map(|d| u64::from(d.count())).sum::<u64>()
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
        let mut schema = self.manifest.schema.clone();
        if let Some(on) = options.bloom {
            schema.bloom.enabled = on;
        }
        let schema = RwLock::new(schema);
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
            next.segments.push(SegmentEntry {
                name: name.clone(),
                max_doc: seg.meta().max_doc,
                deletes: None,
            });
        }
        if let Err(e) = next.commit(&self.dir) {
            created.iter().for_each(|n| delete_segment(&self.dir, n));
            return Err(e);
        }
        self.manifest = next;
        self.generation += 1;
        self.deletes.extend(opened.iter().map(|_| None));
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
            let readers: Vec<(&SegmentReader, Option<&dyn Deletes>)> = group
                .iter()
                .map(|&i| (self.segments[i].as_ref(), self.deletes[i].as_ref().map(|d| d as &dyn Deletes)))
                .collect();
            let meta = match merge_segments(&self.dir, &name, &readers) {
                Ok(m) => m,
                Err(e) => {
                    created.iter().for_each(|n| delete_segment(&self.dir, n));
                    return Err(e);
                }
            };
            next.segments.push(SegmentEntry { name, max_doc: meta.max_doc, deletes: None });
            replaced.extend(group.iter().map(|&i| self.manifest.segments[i].clone()));
        }
        next.commit(&self.dir)?;
        let names: Vec<String> = next.segments.iter().map(|s| s.name.clone()).collect();
        self.segments = open_segments(&self.dir, &names)?;
        self.deletes = read_deletes(&self.dir, &next.segments)?;
        self.manifest = next;
        self.generation += 1;
        for old in &replaced {
            delete_segment(&self.dir, &old.name);
            if let Some(d) = &old.deletes {
                self.dir.delete(d)?;
            }
        }
        Ok(replaced.len())
    }

    /// Deletes segment files no commit refers to (left by an interrupted import or merge).
    fn remove_unreferenced_files(&self) -> Result<()> {
        remove_unreferenced_files(&self.dir, &self.manifest)
    }

    /// Parses a query string against this index's schema.
    pub fn parse(&self, query: &str) -> Result<Query> {
        parse_query(query, &self.manifest.schema)
    }

    /// Runs a parsed query: hits as (segment, document, score).
    pub fn top_docs(&self, query: &Query, options: SearchOptions) -> Result<TopDocs> {
        Searcher::with_deletes(self.views()).search(query, options)
    }

    /// Each segment with its deletions, in index order.
    fn views(&self) -> Vec<(&dyn SegmentRead, Option<&dyn Deletes>)> {
        self.segments
            .iter()
            .zip(&self.deletes)
            .map(|(s, d)| (s.as_ref() as &dyn SegmentRead, d.as_ref().map(|d| d as &dyn Deletes)))
            .collect()
    }

    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let cache = self.results.as_ref().map(|c| (c, self.generation));
        let mut response = run_search(&self.views(), self.schema(), request, cache)?;
        if let Some(stats) = &mut response.stats {
            stats.page_cache = self.page_cache_stats();
        }
        Ok(response)
    }

    /// The stored JSON source of the live document with `_id` `id`.
    pub fn get(&self, id: &str) -> Result<Option<String>> {
        let views = self.views();
        match find_id(&views, id)? {
            Some((i, doc)) => Ok(Some(stored_document(views[i].0, doc)?.1)),
            None => Ok(None),
        }
    }
}

/// Deletes segment and deletion files no commit refers to (left by an
/// interrupted import, merge or commit, or replaced by a newer generation).
pub(crate) fn remove_unreferenced_files(dir: &Directory, manifest: &Manifest) -> Result<()> {
    let live: HashSet<&str> = manifest.segments.iter().map(|s| s.name.as_str()).collect();
    let live_deletes: HashSet<&str> = manifest.segments.iter().filter_map(|s| s.deletes.as_deref()).collect();
    for file in dir.list()? {
        let Some((stem, rest)) = file.split_once('.') else { continue };
        let stale_segment = stem.starts_with("seg_") && !live.contains(stem);
        let stale_deletes = rest.starts_with("del.") && !live_deletes.contains(file.as_str());
        if stale_segment || stale_deletes {
            dir.delete(&file)?;
        }
    }
    Ok(())
}

/// Reads the deletions the manifest names, in segment order.
pub(crate) fn read_deletes(dir: &Directory, entries: &[SegmentEntry]) -> Result<Vec<Option<DeleteBits>>> {
    entries
        .iter()
        .map(|e| match &e.deletes {
            Some(file) => DeleteBits::decode(file, &dir.read_all(file)?, e.max_doc).map(Some),
            None => Ok(None),
        })
        .collect()
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
        let groups_left = max - groups.len();
        let current = groups.last_mut().unwrap();
        if !current.is_empty() && size + u64::from(s.max_doc) > target && groups_left > 0 {
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
        sizes
            .iter()
            .enumerate()
            .map(|(i, &m)| SegmentEntry { name: format!("s{i}"), max_doc: m, deletes: None })
            .collect()
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
