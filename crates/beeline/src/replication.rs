//! This broker's replicas of replicated partitions (a replication factor above 1): one Raft
//! group per local replica, served by the broker's internal API (`cluster::join`) and talking
//! to its peers over the broker's shared connections, each with the stream layer's replica over
//! it (see `beeline_stream::Partition::open_replica` and `beeline_cluster::RaftLog`).

use std::sync::Arc;

use beeline_cluster::transport::{Groups, Peers};
use beeline_cluster::{ClusterSettings, NodeFlusher, RaftLog, RaftLogConfig, RaftTiming};
use beeline_log::{FileJournalConfig, Recovery};
use beeline_stream::{Partition, PartitionConfig, PartitionHandle, SystemClock};

/// The broker's side of replication: the groups its internal API serves, the broker's
/// connections (whose addresses the membership learns), and the one flusher that makes every
/// group's appends durable.
pub struct Replication {
    pub settings: ClusterSettings,
    /// Heartbeats and elections (`--heartbeat-interval`, `--election-timeout`).
    pub timing: RaftTiming,
    pub groups: Groups,
    pub peers: Peers,
    pub flusher: NodeFlusher,
    /// What each local replica keeps of its latest entries for replication
    /// (`RaftLogConfig::recent_entries`): the broker's share, split between its replicas.
    pub recent_entries: usize,
}

impl Replication {
    /// Starts the broker's flusher (on the current runtime). The broker's replicas keep
    /// `recent_entries` bytes of their latest entries between them.
    pub fn new(
        settings: ClusterSettings,
        timing: RaftTiming,
        groups: Groups,
        peers: Peers,
        recent_entries: u64,
    ) -> Result<Self, String> {
        let flusher =
            NodeFlusher::start().map_err(|e| format!("cannot start the journal flusher: {e}"))?;
        let replicas = settings
            .placement()
            .iter()
            .filter(|p| p.has_replica(settings.node_id))
            .count()
            .max(1);
        Ok(Self {
            settings,
            timing,
            groups,
            peers,
            flusher,
            recent_entries: usize::try_from(recent_entries / replicas as u64).unwrap_or(usize::MAX),
        })
    }

    /// Whether this broker holds a replica of `partition`.
    pub fn holds(&self, partition: u16) -> bool {
        self.settings
            .placement()
            .iter()
            .any(|p| p.partition_id == u32::from(partition) && p.has_replica(self.settings.node_id))
    }

    /// Opens this broker's replica of a partition: its Raft group, then the replica that
    /// follows or leads over it.
    pub async fn open_partition(
        &self,
        partition: u16,
        dir: std::path::PathBuf,
        journal: FileJournalConfig,
        snapshots: beeline_state::snapshot::SnapshotStore,
        config: PartitionConfig,
        open: impl FnOnce(Arc<RaftLog>, PartitionConfig) -> Result<PartitionHandle, String>
        + Send
        + 'static,
    ) -> Result<PartitionHandle, String> {
        let placement = self
            .settings
            .placement()
            .into_iter()
            .find(|p| p.partition_id == u32::from(partition))
            .ok_or_else(|| format!("partition {partition} has no placement"))?;
        let members = placement.replicas.iter().map(|r| r.node).collect();
        let log = RaftLog::open(
            RaftLogConfig {
                node_id: self.settings.node_id,
                partition_id: u32::from(partition),
                journal: FileJournalConfig {
                    recovery: Recovery::Strict,
                    ..journal
                },
                timing: self.timing,
                members,
                snapshots,
                kept_after_snapshot: RaftLogConfig::KEPT_AFTER_SNAPSHOT,
                guard_rejoin: true,
                flusher: self.flusher.clone(),
                recent_entries: self.recent_entries,
                election_band: placement.election_band(self.settings.node_id),
                ahead: placement.ahead_of(self.settings.node_id),
            },
            &dir,
            self.peers.clone(),
            &self.groups,
        )
        .await?;
        tokio::task::spawn_blocking(move || open(log, config))
            .await
            .map_err(|e| format!("opening task failed: {e}"))?
    }
}

/// Opens the replica over `log` with the partition's snapshots and RocksDB state.
pub fn open_replica(
    log: Arc<RaftLog>,
    config: PartitionConfig,
    snapshots: beeline_state::snapshot::SnapshotStore,
    opener: Arc<dyn beeline_stream::StoreOpener + Send + Sync>,
    router: Option<Arc<dyn beeline_stream::CommandRouter>>,
) -> Result<PartitionHandle, String> {
    Partition::open_replica(
        config,
        log,
        snapshots,
        opener,
        Arc::new(SystemClock),
        router,
    )
    .map_err(|e| e.to_string())
}
