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
    /// This replica's slot (taken modulo [`SNAPSHOT_SLOTS`]) among those that would snapshot at
    /// the same moment: the replicas of a partition (they replay one log, so they reach a
    /// size at the same entry, and they start their periods together) and a broker's
    /// partitions (they share its load evenly). Slot `s` snapshots `s/16` of the size and of
    /// the period early, so that a cluster's snapshots (each a RocksDB flush, syncs and a log
    /// compaction, its partition's processing waiting meanwhile) do not come in one burst that
    /// stalls every broker's commits together. Default 0 (on time).
    pub snapshot_slot: u8,
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

/// The slots of [`PartitionConfig::snapshot_slot`]: slot `s` comes `s/16` early, so the
/// latest at half the size or period.
pub const SNAPSHOT_SLOTS: u8 = 8;

impl PartitionConfig {
    /// The slot of replica `node_id`'s copy of `partition`, of `partitions` each broker may
    /// hold: different for the replicas of one partition and for one broker's partitions (up
    /// to [`SNAPSHOT_SLOTS`] of them).
    pub fn snapshot_slot_of(node_id: u64, partition: u16, partitions: u16) -> u8 {
        let slot =
            (node_id * u64::from(partitions) + u64::from(partition)) % u64::from(SNAPSHOT_SLOTS);
        slot as u8
    }

    /// The log size at which this replica snapshots ([`snapshot_log_size`](Self::snapshot_log_size)
    /// less its slot's share).
    pub fn snapshot_log_limit(&self) -> Option<u64> {
        let slot = u64::from(self.snapshot_slot % SNAPSHOT_SLOTS);
        self.snapshot_log_size
            .map(|size| size - size / (2 * u64::from(SNAPSHOT_SLOTS)) * slot)
    }

    /// When the first periodic snapshot is due after a start: its slot's share of the period
    /// early.
    pub fn first_snapshot_after(&self) -> Option<Duration> {
        self.snapshot_period.map(|period| {
            let slot = u32::from(self.snapshot_slot % SNAPSHOT_SLOTS);
            period - period / (2 * u32::from(SNAPSHOT_SLOTS)) * slot
        })
    }

    /// The periodic snapshots' timer: first [`first_snapshot_after`](Self::first_snapshot_after),
    /// then every period.
    pub(crate) fn snapshot_timer(&self) -> Option<tokio::time::Interval> {
        let (first, period) = self.first_snapshot_after().zip(self.snapshot_period)?;
        let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + first, period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Some(interval)
    }

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
            snapshot_slot: 0,
            scheduler_batch: 100,
            job_streams: None,
            exporters: Vec::new(),
            disk: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replicas_of_a_partition_and_a_brokers_partitions_snapshot_in_different_slots() {
        let (brokers, partitions) = (3u64, 3u16);
        for partition in 1..=partitions {
            let mut slots: Vec<u8> = (0..brokers)
                .map(|node| PartitionConfig::snapshot_slot_of(node, partition, partitions))
                .collect();
            slots.sort();
            slots.dedup();
            assert_eq!(slots.len(), brokers as usize, "partition {partition}");
        }
        for node in 0..brokers {
            let mut slots: Vec<u8> = (1..=partitions)
                .map(|partition| PartitionConfig::snapshot_slot_of(node, partition, partitions))
                .collect();
            slots.sort();
            slots.dedup();
            assert_eq!(slots.len(), partitions as usize, "broker {node}");
        }
    }

    #[test]
    fn a_slot_snapshots_early_by_at_most_half_the_size() {
        let mut config = PartitionConfig::new(1);
        let size = DEFAULT_SNAPSHOT_LOG_SIZE;
        assert_eq!(config.snapshot_log_limit(), Some(size));
        config.snapshot_slot = 1;
        assert_eq!(config.snapshot_log_limit(), Some(size - size / 16));
        config.snapshot_slot = SNAPSHOT_SLOTS - 1;
        let latest = config.snapshot_log_limit().unwrap();
        assert!(latest > size / 2 && latest < size, "{latest}");
        config.snapshot_log_size = None;
        assert_eq!(config.snapshot_log_limit(), None);
    }

    #[test]
    fn a_slot_starts_its_period_early_by_its_share() {
        let mut config = PartitionConfig::new(1);
        config.snapshot_period = Some(Duration::from_secs(160));
        assert_eq!(
            config.first_snapshot_after(),
            Some(Duration::from_secs(160))
        );
        config.snapshot_slot = 3;
        assert_eq!(
            config.first_snapshot_after(),
            Some(Duration::from_secs(130))
        );
        config.snapshot_slot = SNAPSHOT_SLOTS + 3;
        assert_eq!(
            config.first_snapshot_after(),
            Some(Duration::from_secs(130))
        );
        config.snapshot_period = None;
        assert_eq!(config.first_snapshot_after(), None);
    }
}
