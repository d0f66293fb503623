//! An on-disk segment: its files, checked when opened.

use needle_core::{DocId, Error, FieldId, Result};
use needle_storage::counters::{self, DataKind};
use needle_storage::{prefetch, Directory, FileSlice, ReadBytes};

use crate::doc_values::{BinaryValues, DocValuesReader, KeywordValues, NumericValues};
use crate::docstore::DocStoreReader;
use crate::meta::SegmentMeta;
use crate::postings::{DiskPostings, Postings};
use crate::term_matcher::{KeyAutomaton, TermMatcher};
use crate::{doc_values, docstore, footer, postings, termmap, SegmentRead};

/// The term map's bytes, as the `fst` crate wants them: a view of the
/// mapping, or (for the `pread` and `direct` backends) read into memory at open.
pub type TermBytes = ReadBytes;

/// A term map entry, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermEntry {
    pub offset: u64,
    pub zone_pages: u16,
}

/// How much of a segment [`SegmentReader::open_with`] reads to check it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verify {
    /// Every file's checksum: the whole segment is read once.
    Checksums,
    /// The checksums of the meta and norms files (queries read them whole
    /// anyway), and of the term map, postings and document store only the
    /// footer (kind, version, length): opening reads a few pages of even a
    /// large index, which is what Lucene checks at open too. Readers check
    /// what they decode, so corrupt bytes are errors, never a crash; `needle
    /// check` verifies everything.
    #[default]
    Footers,
}

pub struct SegmentReader {
    name: String,
    meta: SegmentMeta,
    terms: fst::Map<TermBytes>,
    postings: FileSlice,
    norms: ReadBytes,
    docs: DocStoreReader,
    values: Option<DocValuesReader>,
    /// What filters matched here (a sealed segment's documents never change).
    filters: crate::filter_cache::FilterCache,
}

/// File names of a segment, in the order they are written (the doc values
/// file exists only in segments with numeric fields; its meta says so).
pub fn segment_files(name: &str) -> [String; 6] {
    ["post", "terms", "norms", "docs", "dv", "meta"].map(|ext| format!("{name}.{ext}"))
}

impl SegmentReader {
    /// Opens segment `name`, verifying every file's footer and checksum: a
    /// corrupt or truncated file is an error naming it.
    pub fn open(dir: &Directory, name: &str) -> Result<Self> {
        Self::open_with(dir, name, Verify::Checksums)
    }

    /// Opens segment `name`, checking as much as `verify` says.
    pub fn open_with(dir: &Directory, name: &str, verify: Verify) -> Result<Self> {
        let [post, terms, norms_name, docs, values_name, meta_name] = segment_files(name);
        let meta = SegmentMeta::decode(&meta_name, &dir.read_all(&meta_name)?)?;
        let large = verify == Verify::Checksums;
        let versioned =
            |file: &str, kind, version, checksum| open_verified(dir, file, kind, version, checksum, &meta);
        let opened =
            |file: &str, kind, version, checksum| versioned(file, kind, version, checksum).map(|(f, _)| f);
        let postings = opened(&post, postings::KIND, postings::VERSION, large)?;
        // The term map is read whole and kept: always verified (see `termmap::open`).
        let term_bytes = opened(&terms, b"TERM", 1, true)?;
        let terms = termmap::open(&terms, term_bytes.read_all()?)?;
        let norms = opened(&norms_name, b"NORM", 1, true)?.read_all()?;
        let normed = meta.fields.iter().filter(|f| f.norms_index.is_some()).count();
        if norms.len() != normed * meta.max_doc as usize {
            return Err(Error::corrupt(&norms_name, "size does not match the meta's fields and documents"));
        }
        let (docs_body, docs_version) = versioned(&docs, docstore::KIND, docstore::VERSION, large)?;
        let docs = DocStoreReader::open(docs_body, docs_version)?;
        if docs.count() != meta.max_doc {
            return Err(Error::corrupt(docs_name(name), "document count does not match the meta"));
        }
        let values = match meta.files.contains_key("dv") {
            true => {
                let (body, version) = versioned(&values_name, doc_values::KIND, doc_values::VERSION, large)?;
                Some(DocValuesReader::open(body, meta.max_doc, version)?)
            }
            false => None,
        };
        let filters = Default::default();
        Ok(SegmentReader { name: name.to_string(), meta, terms, postings, norms, docs, values, filters })
    }

    pub fn term_map(&self) -> &fst::Map<TermBytes> {
        &self.terms
    }

    pub fn postings_file(&self) -> &FileSlice {
        &self.postings
    }

    pub fn doc_store(&self) -> &DocStoreReader {
        &self.docs
    }

    /// The doc values file, when the segment has numeric fields.
    pub fn doc_values(&self) -> Option<&DocValuesReader> {
        self.values.as_ref()
    }

    pub fn term_entry(&self, field: FieldId, term: &[u8]) -> Option<TermEntry> {
        // The FST's node layout is its own: count the key and the entry as what a lookup needs.
        counters::record_memory(DataKind::TermMap, termmap::key(field, term).len() + 8);
        self.lookup(field, term)
    }

    /// Pins the prefetch zone of each term's record in the application
    /// cache's static part; returns the pages pinned.
    pub fn pin_terms(&self, terms: &[(FieldId, &[u8])]) -> Result<usize> {
        let page = crate::page::PAGE as usize;
        let ranges: Vec<_> = terms
            .iter()
            .filter_map(|&(field, term)| self.lookup(field, term))
            .map(|e| e.offset as usize..e.offset as usize + usize::from(e.zone_pages.max(1)) * page)
            .collect();
        self.postings.pin_all(&ranges)
    }

    /// [`SegmentReader::term_entry`] without counting it (a prefetch hint).
    /// The map was walked whole at open; should a lookup still meet a node
    /// the `fst` crate cannot decode, the panic is caught and recorded as the
    /// query's read error (see `needle_core::read_error`).
    fn lookup(&self, field: FieldId, term: &[u8]) -> Option<TermEntry> {
        let key = termmap::key(field, term);
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.terms.get(&key)));
        let Ok(entry) = found else {
            let file = format!("{}.terms", self.name);
            needle_core::read_error::record(Error::corrupt(
                file,
                "malformed term map (a node decodes out of bounds)",
            ));
            return None;
        };
        let (offset, zone_pages) = termmap::unpack_entry(entry?);
        Some(TermEntry { offset, zone_pages })
    }

    /// The posting list at a term map entry (for code that walks the term map).
    pub fn postings_at(&self, entry: u64) -> Result<DiskPostings> {
        DiskPostings::open(&self.postings, termmap::unpack_entry(entry).0, self.meta.max_doc)
    }
}

fn docs_name(segment: &str) -> String {
    format!("{segment}.docs")
}

/// Opens a file, checks its footer (and its checksum when asked) and that it
/// is the file `meta` names (its length and footer checksum), and returns its
/// body and the format version its footer gives.
fn open_verified(
    dir: &Directory,
    name: &str,
    kind: &[u8; 4],
    version: u32,
    checksum: bool,
    meta: &SegmentMeta,
) -> Result<(FileSlice, u32)> {
    let file = dir.open_read(name)?;
    let (body_len, found_version) = footer::verify_file(&file, kind, version, checksum)?;
    let ext = name.rsplit('.').next().unwrap_or_default();
    if let Some(stamp) = meta.files.get(ext) {
        let crc = footer::stored_crc(&file.read(file.len() - 8..file.len())?[..]);
        if stamp.len != file.len() as u64 || stamp.crc != crc {
            return Err(Error::corrupt(
                name,
                format!(
                    "not this segment's file: {} bytes with checksum {crc:08x}, its meta says {} bytes with {:08x}",
                    file.len(),
                    stamp.len,
                    stamp.crc
                ),
            ));
        }
    }
    Ok((file.slice(0..body_len), found_version))
}

impl SegmentRead for SegmentReader {
    fn name(&self) -> &str {
        &self.name
    }

    fn meta(&self) -> &SegmentMeta {
        &self.meta
    }

    fn filter_cache(&self) -> Option<&crate::filter_cache::FilterCache> {
        Some(&self.filters)
    }

    fn matching_terms(&self, field: FieldId, matcher: &dyn TermMatcher) -> Result<Vec<Vec<u8>>> {
        use fst::{IntoStreamer, Streamer};
        let (first, end) = termmap::field_keys(field);
        let automaton = KeyAutomaton { matcher, skip: first.len() };
        // As in `lookup`: a node the `fst` crate cannot decode is a corrupt map, not a panic.
        let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut stream = self.terms.search(automaton).ge(&first).lt(&end).into_stream();
            let mut terms = Vec::new();
            while let Some((key, _)) = stream.next() {
                terms.push(key[first.len()..].to_vec());
            }
            terms
        }));
        walked.map_err(|_| {
            Error::corrupt(
                format!("{}.terms", self.name),
                "malformed term map (a node decodes out of bounds)",
            )
        })
    }

    fn postings(&self, field: FieldId, term: &[u8]) -> Result<Option<Box<dyn Postings>>> {
        let Some(e) = self.term_entry(field, term) else { return Ok(None) };
        Ok(Some(Box::new(DiskPostings::open(&self.postings, e.offset, self.meta.max_doc)?)))
    }

    fn term_docs(&self, field: FieldId, term: &[u8]) -> Result<Vec<DocId>> {
        let Some(e) = self.term_entry(field, term) else { return Ok(Vec::new()) };
        if let Some(doc) = crate::postings::lone_doc(&self.postings, e.offset, self.meta.max_doc)? {
            return Ok(vec![doc]);
        }
        crate::segment::all_docs(&mut DiskPostings::open(&self.postings, e.offset, self.meta.max_doc)?)
    }

    /// Asks for each record's first page, or its whole prefetch zone when
    /// the zone reaches the adaptive prefetch threshold, all at once; then opens them.
    fn postings_all(&self, terms: &[(FieldId, &[u8])]) -> Result<Vec<Option<Box<dyn Postings>>>> {
        let entries: Vec<Option<TermEntry>> =
            terms.iter().map(|&(field, term)| self.term_entry(field, term)).collect();
        let page = crate::page::PAGE as usize;
        let ranges: Vec<_> = entries
            .iter()
            .flatten()
            .map(|e| {
                let zone = usize::from(e.zone_pages) * page;
                let whole = prefetch::min_bytes().is_some_and(|min| zone >= min);
                let start = e.offset as usize;
                // A zone of at most a page of a record whose searched part
                // fits a page lies on the record's first page (such parts do
                // not straddle two); of a longer one it may reach the next
                // page, read then (rarely: the zone is small).
                let first = match e.zone_pages {
                    0 | 1 => page - start % page,
                    _ => page,
                };
                start..start + if whole { zone } else { first }
            })
            .collect();
        self.postings.will_need_all(&ranges);
        let open = |e: &TermEntry| {
            DiskPostings::open(&self.postings, e.offset, self.meta.max_doc)
                .map(|p| Box::new(p) as Box<dyn Postings>)
        };
        entries.iter().map(|e| e.as_ref().map(open).transpose()).collect()
    }

    fn prefetch_stored(&self, docs: &[DocId]) {
        self.docs.prefetch(docs);
    }

    fn norms(&self, field: FieldId) -> Option<&[u8]> {
        let index = self.meta.field(field)?.norms_index? as usize;
        let n = self.meta.max_doc as usize;
        Some(&self.norms[index * n..(index + 1) * n])
    }

    fn stored(&self, doc: DocId) -> Result<Vec<u8>> {
        self.docs.get(doc)
    }

    fn stored_head(&self, doc: DocId) -> Result<Vec<u8>> {
        self.docs.head(doc)
    }

    fn stored_frame(&self, doc: DocId) -> Result<Option<crate::docstore::Frame>> {
        self.docs.frame_bytes(doc)
    }

    fn numeric_values(&self, field: FieldId) -> Option<Box<dyn NumericValues + Send>> {
        self.values.as_ref()?.values(field)
    }

    fn numeric_points(&self, field: FieldId) -> Option<crate::doc_values::Points> {
        self.values.as_ref()?.points(field)
    }

    fn numeric_fields(&self) -> Vec<FieldId> {
        let Some(v) = &self.values else { return Vec::new() };
        let mut out: Vec<FieldId> = v.fields().filter(|&f| !v.is_keyword(f) && !v.is_binary(f)).collect();
        out.sort_unstable();
        out
    }

    fn binary_values(&self, field: FieldId) -> Option<Box<dyn BinaryValues + Send>> {
        self.values.as_ref()?.binary(field)
    }

    fn binary_fields(&self) -> Vec<FieldId> {
        let Some(v) = &self.values else { return Vec::new() };
        let mut out: Vec<FieldId> = v.fields().filter(|&f| v.is_binary(f)).collect();
        out.sort_unstable();
        out
    }

    fn keyword_values(&self, field: FieldId) -> Option<Box<dyn KeywordValues + Send>> {
        self.values.as_ref()?.keywords(field).unwrap_or_else(|e| {
            needle_core::read_error::record(e);
            None
        })
    }
}
