//! The Raft state machine of a partition, as a commit notifier.
//!
//! The partition's real state machine is the stream processor and its RocksDB state, fed from
//! the journal's committed entries. Applying an entry here therefore only publishes that it is
//! committed: the journal's commit index moves, and whoever reads committed entries (replay on
//! a follower, exporters, the leader's after-commit side effects) goes on. It also keeps what
//! openraft needs of a state machine: the last applied log id and the last membership.
//!
//! Snapshots carry only that (the snapshot meta) so far; the partition's state checkpoint (a
//! RocksDB checkpoint directory, streamed to a lagging follower) is the next step.

use std::io;
use std::sync::{Arc, Mutex};

use beeline_log::CommitIndex;
use futures_util::{Stream, TryStreamExt};
use openraft::entry::RaftEntry;
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::{EntryPayload, RaftSnapshotBuilder};

use crate::types::{LogId, SnapshotMeta, StoredMembership, TypeConfig};

/// What a snapshot of the commit notifier holds besides its meta: nothing yet (see the module
/// documentation).
pub type SnapshotData = Vec<u8>;
pub type Snapshot = openraft::Snapshot<
    openraft::vote::leader_id_std::CommittedLeaderId<u64>,
    crate::types::NodeId,
    openraft::impls::BasicNode,
    SnapshotData,
>;

#[derive(Debug, Default)]
struct Applied {
    last: Option<LogId>,
    membership: StoredMembership,
    snapshot: Option<SnapshotMeta>,
}

/// Publishes Raft commits to the partition's journal.
#[derive(Debug, Clone)]
pub struct CommitNotifier {
    commit: Arc<CommitIndex>,
    applied: Arc<Mutex<Applied>>,
}

impl CommitNotifier {
    /// A notifier that advances `commit` (the partition journal's commit index).
    pub fn new(commit: Arc<CommitIndex>) -> Self {
        Self {
            commit,
            applied: Arc::default(),
        }
    }

    fn applied(&self) -> std::sync::MutexGuard<'_, Applied> {
        self.applied.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn snapshot_now(&self) -> Snapshot {
        let mut applied = self.applied();
        let meta = SnapshotMeta {
            last_log_id: applied.last,
            last_membership: applied.membership.clone(),
        };
        applied.snapshot = Some(meta.clone());
        Snapshot {
            meta,
            snapshot: Vec::new(),
        }
    }
}

impl RaftSnapshotBuilder<TypeConfig> for CommitNotifier {
    type SnapshotData = SnapshotData;

    async fn build_snapshot(&mut self) -> Result<Snapshot, io::Error> {
        Ok(self.snapshot_now())
    }
}

impl RaftStateMachine<TypeConfig> for CommitNotifier {
    type SnapshotData = SnapshotData;
    type SnapshotBuilder = Self;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), io::Error> {
        let applied = self.applied();
        Ok((applied.last, applied.membership.clone()))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + Send,
    {
        while let Some((entry, responder)) = entries.try_next().await? {
            let log_id = entry.log_id();
            {
                let mut applied = self.applied();
                applied.last = Some(log_id);
                if let EntryPayload::Membership(membership) = &entry.payload {
                    applied.membership = StoredMembership::new(Some(log_id), membership.clone());
                }
            }
            // Raft index i is journal index i + 1.
            self.commit.advance(log_id.index + 1);
            if let Some(responder) = responder {
                responder.send(());
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        _snapshot: SnapshotData,
    ) -> Result<(), io::Error> {
        {
            let mut applied = self.applied();
            applied.last = meta.last_log_id;
            applied.membership = meta.last_membership.clone();
            applied.snapshot = Some(meta.clone());
        }
        if let Some(last) = meta.last_log_id {
            self.commit.advance(last.index + 1);
        }
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot>, io::Error> {
        Ok(self.applied().snapshot.clone().map(|meta| Snapshot {
            meta,
            snapshot: Vec::new(),
        }))
    }
}
