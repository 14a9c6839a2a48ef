use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one partition, cheap to update from the processing loop.
#[derive(Debug, Default)]
pub struct PartitionMetrics {
    pub commands_processed: AtomicU64,
    pub records_written: AtomicU64,
    pub appends: AtomicU64,
    pub flushes: AtomicU64,
    pub rejected_overload: AtomicU64,
    pub snapshots: AtomicU64,
    /// Jobs handed to a job stream when they were created (see `JobStreams`).
    pub jobs_pushed: AtomicU64,
    /// Sum and count of processing latencies (command appended to results stored), in µs.
    pub processing_micros: AtomicU64,
}

impl PartitionMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
