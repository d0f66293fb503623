//! Test support: [`Oracle`], a naive in-memory inverted index that scores
//! every document by brute force with its own BM25, and [`random`], seeded
//! generators of documents and queries. Engine tests compare the engine's
//! results with the oracle's. [`http`] is a minimal client for the server's tests;
//! [`etcd`] and [`nats`] run an etcd and a NATS server for the cluster's,
//! [`s3`] an S3 emulator for its segment store.

pub mod etcd;
pub mod http;
pub mod nats;
pub mod oracle;
pub mod random;
pub mod s3;

pub use oracle::{Oracle, OracleField};
