use std::sync::Arc;
use std::time::Duration;

use crate::disk::DiskSpace;
use crate::job_streams::JobStreams;

/// When appended entries are synced to disk. Answers always wait for the sync they depend on,
/// so only `None` can lose acknowledged work (on a power loss, not on a process crash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushPolicy {
    /// Sync as soon as something is written; appends made during a sync go with the next one
    /// (group commit). The default.
    Immediate,
    /// Sync at most once per interval: fewer syncs, higher latency.
    Delayed(Duration),
    /// Never sync; commit on write and leave durability to the operating system.
    None,
}

/// The default of [`PartitionConfig::snapshot_log_size`]: two of the default 128 MiB
/// segments, about half a million records, which replay in a few seconds.
pub const DEFAULT_SNAPSHOT_LOG_SIZE: u64 = 256 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct PartitionConfig {
    pub partition_id: u16,
    /// Partitions of the cluster. Default 1.
    pub partition_count: u16,
    /// Requests that may wait in the inbox; beyond it, requests are refused as exhausted.
    /// Default 1024.
    pub inbox_capacity: usize,
    /// Most records in one processing batch. Default 1000.
    pub max_batch_records: usize,
    /// Largest encoded batch; must not exceed the journal's maximum entry size. Default 4 MiB.
    pub max_batch_bytes: usize,
    /// The largest message a client is handed (the gateway's): larger jobs are not activated
    /// but raise an incident. Default 4 MiB.
    pub max_message_size: usize,
    pub flush: FlushPolicy,
    /// How often to take a snapshot (`None`: only when asked). Default 5 minutes.
    pub snapshot_period: Option<Duration>,
    /// Also take a snapshot as soon as the log written since the latest one (its entries'
    /// bytes, replayed or appended) reaches this size (`None`: by the period only). A snapshot
    /// lets the log be compacted below it, so this bounds a partition's log on disk, and the
    /// replay after a restart, under any rate. Default 256 MiB.
    pub snapshot_log_size: Option<u64>,
    /// Due commands written per scheduler run. Default 100.
    pub scheduler_batch: usize,
    /// The node's open job streams, which new jobs are pushed to. Default none: jobs wait to
    /// be activated.
    pub job_streams: Option<Arc<JobStreams>>,
    /// Ids of the exporters that read this partition's log. Each one's acknowledged position
    /// is kept in the state (and its snapshots), and the log is compacted no further than the
    /// lowest; a stored position of an exporter not listed here is dropped at open. Default
    /// none: the log compacts up to each snapshot.
    pub exporters: Vec<String>,
    /// The node's free-disk watermark: below it, new commands are refused. Default none.
    pub disk: Option<Arc<DiskSpace>>,
}

impl PartitionConfig {
    pub fn new(partition_id: u16) -> Self {
        Self {
            partition_id,
            partition_count: 1,
            inbox_capacity: 1024,
            max_batch_records: 1000,
            max_batch_bytes: 4 * 1024 * 1024 - 1024,
            max_message_size: 4 * 1024 * 1024,
            flush: FlushPolicy::Immediate,
            snapshot_period: Some(Duration::from_secs(300)),
            snapshot_log_size: Some(DEFAULT_SNAPSHOT_LOG_SIZE),
            scheduler_batch: 100,
            job_streams: None,
            exporters: Vec::new(),
            disk: None,
        }
    }
}
