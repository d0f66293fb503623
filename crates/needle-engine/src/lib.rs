//! The engine: an [`Index`] is a folder of segments, a manifest that names
//! them and holds the schema, and a write-ahead log. One [`IndexWriter`] at a
//! time changes it (adds, deletes, imports, commits, merges); searches run on
//! [`Searcher`] snapshots that never hold a lock a writer waits for.
//!
//! ```no_run
//! # fn main() -> needle_engine::Result<()> {
//! use needle_engine::{Index, SearchRequest, WriterOptions};
//! let index = Index::open_or_create(std::path::Path::new("my-index"), None)?;
//! let writer = index.writer(WriterOptions::default())?;
//! writer.add(r#"{"id": "1", "title": "Hello"}"#)?; // searchable (and durable) now
//! let hits = index.searcher().search(&SearchRequest::new("hello"))?;
//! assert_eq!(hits.total, 1);
//! writer.close()?; // commits
//! # Ok(()) }
//! ```

mod aggs;
mod check;
mod commit_point;
mod corpus_stats;
mod date_format;
mod date_math;
mod decimal_format;
mod deletes;
mod distinct;
mod document;
mod document_builder;
mod dump;
#[doc(hidden)]
pub mod fuzzing;
mod hot_terms;
mod index;
pub mod index_analyzers;
pub mod ingest_log;
mod manifest;
mod query_fields;
mod result_cache;
mod schema;
mod search;
mod searcher;
mod segments;
mod updates;
mod value_fields;
mod values;
mod wal;
mod writer;
mod zone;

pub use aggs::{
    unify_fields, AggField, AggKind, Aggregation, CalendarUnit, DateInterval, FiltersShape, Gathered, Metric,
    Missing, RangeSpec, TermsFilter, TermsOrder, TermsPattern, TopHits, ValueFormat,
};
pub use check::CheckReport;
pub use commit_point::CommitPoint;
pub use corpus_stats::{CorpusStatistics, FieldStatistics, SharedCorpus};
pub use date_format::{parse_date, DateFormat, DEFAULT_DATE_FORMAT};
pub use date_math::{now_ms, DateReading};
pub use decimal_format::DecimalFormat;
pub use distinct::DEFAULT_THRESHOLD as DEFAULT_PRECISION_THRESHOLD;
pub use document_builder::Document;
pub use hot_terms::PinSummary;
pub use index::{Index, IndexOptions};
/// The name of an index's commit point: a folder holding it is an index.
pub use manifest::FILE as MANIFEST_FILE;
pub use needle_codecs::Verify;
pub use needle_core::{Error, Result};
pub use needle_search::highlight::FragmentOptions;
pub use needle_search::{
    Explanation, ParseOptions, Query, RangeQuery, SearchOptions, SortBy, SortKey, SortValue, TopDocs,
};
pub use needle_storage::cache::CacheStats;
pub use needle_storage::prefetch::set_min_bytes as set_prefetch_min;
pub use needle_storage::{Backend, ReadOptions};
pub use result_cache::ResultCache;
pub use schema::{flatten_settings, Dynamic, FieldDef, FieldKind, IndexSort, Schema, ID_FIELD};
pub use search::{Hit, QueryStats, SearchRequest, SearchResponse};
pub use searcher::{Matched, Searcher, StoredDocument};
pub use value_fields::DocValueField;
pub use values::{
    base64_bytes, base64_text, column_json, has_doc_values, in_place_field, is_point, missing_value,
    query_value, range_bounds, RangeBounds,
};
pub use wal::Replayed;
pub use writer::{
    read_line_within, Durability, IfCurrent, ImportOptions, ImportProgress, ImportSummary, IndexWriter,
    WriteOutcome, WriterOptions, MAX_LINE_BYTES,
};
pub use zone::Zone;
