//! The REST API end to end: a server on a loopback port, spoken to over HTTP.

mod harness;

mod aliases;
mod bulk;
mod corpus_over_nodes;
mod documents;
mod index_analyzers;
mod lucene_parity;
mod node;
mod opensearch_aliases;
mod opensearch_analyze;
mod opensearch_by_query;
mod opensearch_data_streams;
mod opensearch_dfs;
mod opensearch_field_caps;
mod opensearch_multi_fields;
mod opensearch_parity;
mod opensearch_queries;
mod opensearch_reindex;
mod opensearch_shard_failures;
mod opensearch_templates;
mod request_cache;
mod scroll;
mod search;
mod stats;
mod values;
