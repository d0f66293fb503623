//! The engine: an [`Index`] is a folder of segments plus a manifest that
//! names them and holds the schema. Imports write new segments and commit a
//! new manifest only when they complete; merges replace adjacent segments by
//! one; searches run over the segments the manifest names, with statistics
//! summed across them.

mod check;
mod deletes;
mod document;
mod dump;
mod hot_terms;
mod import;
mod index;
mod live;
mod manifest;
mod query_fields;
mod result_cache;
mod schema;
mod search;
mod wal;

pub use check::CheckReport;
pub use hot_terms::PinSummary;
pub use import::{ImportOptions, ImportProgress, ImportSummary};
pub use index::Index;
pub use live::{Durability, LiveIndex, LiveOptions};
pub use needle_codecs::Verify;
pub use needle_storage::cache::CacheStats;
pub use needle_storage::prefetch::set_min_bytes as set_prefetch_min;
pub use needle_storage::{Backend, ReadOptions};
pub use result_cache::ResultCache;
pub use schema::{Dynamic, FieldDef, FieldKind, Schema, ID_FIELD};
pub use search::{Hit, QueryStats, SearchRequest, SearchResponse};
