//! Needle's cluster layer (issue 19's scale-out): the parts of a cluster that
//! systems built for them already solve, composed rather than written again.
//! Today: membership and the cluster manager's election in etcd
//! (`membership`), through a small client of etcd's JSON gateway (`etcd`),
//! indexes whose shards live on the nodes (`indices`: where each shard
//! is, which shard a document goes to), and each shard's ingest log, a
//! stream in NATS JetStream (`log`), and the shards' segments in an object
//! store with a pointer to each shard's last stored commit in etcd (`store`).
//! The layer knows nothing of indexes or HTTP routes: the server asks it who
//! is in the cluster.

pub mod etcd;
pub mod http;
pub mod indices;
pub mod log;
pub mod membership;
pub mod store;

pub use indices::{shard_name, shard_of, ShardedIndex};
pub use membership::{ClusterConfig, Member, NodeInfo, View};
