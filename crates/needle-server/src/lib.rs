//! Needle's server: Elasticsearch's REST API over HTTP, so that its clients,
//! tools and `curl` habits work unchanged.
//!
//! A request goes through [`middleware`] (API key, the headers clients check,
//! `pretty` and `filter_path`) to a handler of [`routes`], which reads its
//! [`call::Call`] (path, parameters, body), does its work on the blocking pool
//! through the [`catalog::Catalog`]'s index handles (one writer each,
//! snapshots for reads), and answers with Elasticsearch's shapes and errors.

mod aggs;
mod alias_options;
mod call;
mod catalog;
mod coordinator;
mod counters;
mod data_streams;
mod demo;
mod docvalue_fields;
mod dsl;
mod error;
mod filter_path;
pub mod fuzzing;
pub mod ingest;
mod kept_file;
mod middleware;
mod node_stats;
mod params;
mod pattern;
mod pools;
mod request_cache;
mod respond;
pub(crate) mod routes;
mod server;
mod sort;
mod source_filter;
mod templates;

pub use demo::load_demo;
pub use error::ApiError;
pub use needle_cluster::ClusterConfig;
pub use pools::PoolSize;
pub use routes::search::search_body;
pub use server::{Server, ServerConfig};
