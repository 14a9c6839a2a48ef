//! A partition replica's role in its group, as the topology reports it and the gateway routes
//! by it.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::watch;

use crate::handle::PartitionHandle;

/// A replica's part in its partition (Zeebe's partition roles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Processes commands: the only replica that takes them.
    Leader,
    /// Follows the leader's log.
    Follower,
    /// Takes no part (not started, stopped, or outside the group).
    Inactive,
}

/// Where a replica stands: its role, the highest term it knows, and the leader it knows of
/// (a broker's node id). A node that is not clustered leads term 1 of its own partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleState {
    pub role: Role,
    pub term: u64,
    pub leader: Option<u64>,
}

impl RoleState {
    /// What a partition of a single, unreplicated node always is.
    pub fn single_node() -> Self {
        Self {
            role: Role::Leader,
            term: 1,
            leader: None,
        }
    }

    pub fn inactive() -> Self {
        Self {
            role: Role::Inactive,
            term: 0,
            leader: None,
        }
    }
}

/// A partition's replicated log, as the partition's replica drives it. The cluster crate
/// implements it over Raft; nothing here knows Raft.
///
/// - [`roles`](ReplicatedLog::roles) reports [`Role::Leader`] only once this replica leads
///   and everything before its term's first entry is committed, so the committed log is the
///   whole log and processing can start from it.
/// - [`lead`](ReplicatedLog::lead) gives the journal to lead with in that term: its appends
///   are proposed to the group in order, its commit index is the group's (quorum) commit, and
///   once the term's leadership is lost its appends and flushes fail at once.
pub trait ReplicatedLog: Send + Sync + 'static {
    type Journal: beeline_log::Journal;

    /// This replica's role, changing as the group elects.
    fn roles(&self) -> watch::Receiver<RoleState>;

    /// The journal to lead with in `term`; `None` when this replica does not (or no longer)
    /// lead `term`.
    fn lead(&self, term: u64) -> Option<Self::Journal>;

    /// Whether the leadership of `term` that [`lead`](ReplicatedLog::lead) gave still holds:
    /// false once the group refused one of the term's writes or moved on, which may be seen
    /// here before [`roles`](ReplicatedLog::roles) shows it.
    fn leads(&self, term: u64) -> bool;

    /// A reader of the committed entries.
    fn reader(&self) -> <Self::Journal as beeline_log::Journal>::Reader;

    /// The committed index, shared with every reader.
    fn commit_index(&self) -> std::sync::Arc<beeline_log::CommitIndex>;

    /// The replica took a snapshot (the latest in its snapshot store) and needs the entries
    /// from `keep_from` on (for its snapshot and its exporters): the log may be compacted
    /// below. A leader's processor says the same through its journal's `compact`.
    fn snapshot_taken(&self, keep_from: u64);

    /// Changes whenever a snapshot from another replica is installed in the replica's
    /// snapshot store, replacing what the log held before it: the replica then rebuilds its
    /// state from that snapshot and the log after it.
    fn installed(&self) -> watch::Receiver<u64>;

    /// Leaves the group for good (the node stops).
    fn shutdown(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

impl PartitionHandle {
    /// This replica's role now.
    pub fn role(&self) -> RoleState {
        *self.role.borrow()
    }

    /// This replica's role, changing as leadership moves (the topology announces it).
    pub fn roles(&self) -> watch::Receiver<RoleState> {
        self.role.clone()
    }

    /// The partition's health, changing when it fails or stops (the topology announces it).
    pub fn statuses(&self) -> watch::Receiver<crate::PartitionStatus> {
        self.status.clone()
    }
}
