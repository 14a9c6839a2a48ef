//! The cluster: each partition is one Raft group (openraft) whose log is the partition's
//! journal.
//!
//! Design notes:
//! - **The journal is the Raft log.** [`JournalLogStore`] implements openraft's
//!   `RaftLogStorage` over any [`beeline_log::Journal`]: frames carry the Raft term and entry
//!   kind, the vote and purge mark are small synced files beside the journal, and replication
//!   reads entries that are appended but not yet flushed or committed. openraft's own storage
//!   conformance suite runs against it (`tests/raft_storage.rs`).
//! - **The state machine is a commit notifier** ([`CommitNotifier`]): applying an entry moves
//!   the journal's commit index; the stream processor stays the real state machine and reads
//!   committed entries as on a single node.
//! - **The internal transport** ([`transport`]): Raft messages between brokers over tonic on the
//!   internal port, one HTTP/2 connection per pair of brokers for every partition group.
//! - **Membership and topology** ([`membership`], [`topology`]): brokers push their info
//!   (partitions with role, term and health, addresses, settings) to each other over the
//!   internal port; the leader of a partition is the live broker leading it in the highest
//!   term. Commands between partitions ([`router`]), forwarded client commands and job streams
//!   ([`job_streams`]) cross brokers on the same connections.
//! - **Placement** ([`placement`]) is Zeebe's round-robin with priorities, a pure function of
//!   the settings ([`settings`]), so every broker computes the same replica sets.
//! - **One timer grid per broker** ([`timers`]): every group's waits (its tick above all) end
//!   on instants shared by all groups, so an idle broker wakes once per tick for all of them.
//! - **Everything openraft-specific stays in this crate**, so that an openraft upgrade (the
//!   0.10 line is alpha) touches nothing else; the storage suite runs on every upgrade.

pub mod check;
pub mod job_streams;
pub mod membership;
pub mod metrics;
pub mod placement;
pub mod rebalance;
pub mod records;
pub mod rejoin;
pub mod replicated_log;
pub mod router;
pub mod settings;
pub mod sim;
pub mod state_machine;
pub mod storage;
pub mod timers;
pub mod topology;
pub mod transport;
pub mod types;

pub use membership::{HEARD_WITHIN, Membership, MembershipConfig, ReplicasHeard};
pub use metrics::GroupMetrics;
pub use placement::ElectionBand;
pub use replicated_log::{
    DEFAULT_ELECTION_TIMEOUT, DEFAULT_HEARTBEAT_INTERVAL, RaftJournal, RaftLog, RaftLogConfig,
    RaftTiming,
};
pub use router::ClusterRouter;
pub use settings::{ClusterSettings, SettingsError};
pub use state_machine::CommitNotifier;
pub use storage::{
    CompactionFloor, FlushCounts, JournalLogReader, JournalLogStore, MetaDir, NodeFlusher,
    ReplicaReader, ReplicaReaders,
};
pub use topology::{BrokerInfo, ClusterView, Health, Leader, PartitionState, Role};
pub use transport::{BrokerServices, Executor};
pub use types::{Batch, NodeId, TypeConfig};
