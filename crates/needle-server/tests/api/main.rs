//! The REST API end to end: a server on a loopback port, spoken to over HTTP.

mod harness;

mod bulk;
mod documents;
mod lucene_parity;
mod node;
mod search;
mod values;
