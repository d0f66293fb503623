//! Benchmarks of a search server over loopback HTTP (Needle's `needle serve` or
//! OpenSearch, given the same requests): `bridge` serves the engine protocol by
//! sending each search to the server, so `run` and `capacity` drive a server as
//! they drive an in-process engine; `bulk` times `_bulk` ingest.

pub mod bridge;
pub mod bulk;
pub mod client;
