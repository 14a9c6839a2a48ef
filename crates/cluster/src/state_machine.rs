//! The Raft state machine of a partition, as a commit notifier.
//!
//! The partition's real state machine is the stream processor and its RocksDB state, fed from
//! the journal's committed entries. Applying an entry here therefore only publishes that it is
//! committed: the journal's commit index moves, and whoever reads committed entries (replay on
//! a follower, exporters, the leader's after-commit side effects) goes on. It also keeps what
//! openraft needs of a state machine: the last applied log id and the last membership.
//!
//! **Snapshots are the partition's own** (a RocksDB checkpoint directory in its snapshot store,
//! at a record position). The replica registers each one it takes with the log id it covers
//! ([`CommitNotifier::set_snapshot`], computed by `RaftLog`), and the group's snapshot is the
//! latest registered: the leader streams that directory to a replica that needs entries it
//! has purged, and the group purges its log below it. A snapshot received from the leader is
//! in the snapshot store already (checked and renamed into place by the transport) when
//! openraft installs it here; installing records it, tells the replica to rebuild its state
//! from it ([`CommitNotifier::installed`]), and moves the commit index to it. The current
//! snapshot's record is kept on disk (`raft-snapshot`, [`MetaDir`]) so a restarted replica
//! knows which log id its snapshot stands for.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use beeline_log::CommitIndex;
use futures_util::{Stream, TryStreamExt};
use openraft::entry::RaftEntry;
use openraft::storage::{EntryResponder, RaftStateMachine};
use openraft::{EntryPayload, RaftSnapshotBuilder};
use tokio::sync::watch;

use crate::storage::{MetaDir, SnapshotRecord};
use crate::types::{LogId, SnapshotMeta, StoredMembership, TypeConfig};

/// A snapshot as the group sees it: the partition's snapshot directory and the record position
/// it holds. On a receiving replica, the directory is the one installed in its own store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotData {
    pub position: i64,
    pub path: PathBuf,
}

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
    snapshot: Option<(SnapshotMeta, SnapshotData)>,
}

/// Publishes Raft commits to the partition's journal.
#[derive(Debug, Clone)]
pub struct CommitNotifier {
    commit: Arc<CommitIndex>,
    applied: Arc<Mutex<Applied>>,
    installed: Arc<watch::Sender<u64>>,
    /// Where the current snapshot's record is kept (none in tests of the bare group).
    meta: Option<MetaDir>,
}

impl CommitNotifier {
    /// A notifier that advances `commit` (the partition journal's commit index).
    pub fn new(commit: Arc<CommitIndex>) -> Self {
        Self {
            commit,
            applied: Arc::default(),
            installed: Arc::new(watch::Sender::new(0)),
            meta: None,
        }
    }

    /// A notifier that keeps its current snapshot's record in `meta`, starting from the one
    /// there (`snapshot`: the record and the stream snapshot's directory, when it still exists).
    pub fn with_snapshots(
        commit: Arc<CommitIndex>,
        meta: MetaDir,
        snapshot: Option<(SnapshotMeta, SnapshotData)>,
    ) -> Self {
        let notifier = Self {
            meta: Some(meta),
            ..Self::new(commit)
        };
        notifier.applied().snapshot = snapshot;
        notifier
    }

    fn applied(&self) -> std::sync::MutexGuard<'_, Applied> {
        self.applied.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts the snapshots installed from a leader: the replica rebuilds its state from its
    /// snapshot store each time it changes.
    pub fn installed(&self) -> watch::Receiver<u64> {
        self.installed.subscribe()
    }

    /// The current snapshot's meta and position.
    pub fn current(&self) -> Option<(SnapshotMeta, SnapshotData)> {
        self.applied().snapshot.clone()
    }

    /// The last membership applied, if it is at or below `log_id` (what a snapshot covering
    /// `log_id` holds).
    pub fn membership_at(&self, log_id: &LogId) -> Option<StoredMembership> {
        let applied = self.applied();
        let at = applied.membership.log_id().as_ref();
        at.is_some_and(|at| at <= log_id)
            .then(|| applied.membership.clone())
    }

    /// Makes `data` (a snapshot the partition took) the group's snapshot, covering `meta`.
    pub fn set_snapshot(&self, meta: SnapshotMeta, data: SnapshotData) -> io::Result<()> {
        self.record(&meta, &data)?;
        self.applied().snapshot = Some((meta, data));
        Ok(())
    }

    fn record(&self, meta: &SnapshotMeta, data: &SnapshotData) -> io::Result<()> {
        match &self.meta {
            Some(dir) => dir.save_snapshot(&SnapshotRecord {
                meta: meta.clone(),
                position: data.position,
            }),
            None => Ok(()),
        }
    }

    fn current_snapshot(&self) -> Option<Snapshot> {
        self.applied()
            .snapshot
            .clone()
            .map(|(meta, snapshot)| Snapshot { meta, snapshot })
    }
}

impl RaftSnapshotBuilder<TypeConfig> for CommitNotifier {
    type SnapshotData = SnapshotData;

    /// The latest snapshot the partition registered: the group asks for one only after a
    /// registration (`RaftLog` triggers it), or at start when its log was purged. A bare
    /// group (no partition snapshots: openraft's storage suite) snapshots what it applied,
    /// with no directory.
    async fn build_snapshot(&mut self) -> Result<Snapshot, io::Error> {
        if self.meta.is_none() {
            let mut applied = self.applied();
            let meta = SnapshotMeta {
                last_log_id: applied.last,
                last_membership: applied.membership.clone(),
            };
            let data = SnapshotData {
                position: -1,
                path: PathBuf::new(),
            };
            applied.snapshot = Some((meta.clone(), data.clone()));
            return Ok(Snapshot {
                meta,
                snapshot: data,
            });
        }
        self.current_snapshot().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "the partition has no snapshot registered with its group, but its log is purged",
            )
        })
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

    /// Records a snapshot from the leader (already in the partition's snapshot store) or, at
    /// start, the replica's own current one, and tells the replica to rebuild from it.
    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: SnapshotData,
    ) -> Result<(), io::Error> {
        self.record(meta, &snapshot)?;
        {
            let mut applied = self.applied();
            applied.last = meta.last_log_id;
            applied.membership = meta.last_membership.clone();
            applied.snapshot = Some((meta.clone(), snapshot));
        }
        // The replica drops its state before it reads what the commit index now covers.
        self.installed.send_modify(|installs| *installs += 1);
        if let Some(last) = meta.last_log_id {
            self.commit.advance(last.index + 1);
        }
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot>, io::Error> {
        Ok(self.current_snapshot())
    }
}
