//! What a store is doing, for monitoring: the same counters for every store.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What a store is doing.
#[derive(Debug, Default)]
pub struct StoreMetrics {
    /// Transactions written.
    pub flushes: AtomicU64,
    /// Rows upserted.
    pub rows: AtomicU64,
    /// Write transactions that failed (each retried).
    pub write_failures: AtomicU64,
    /// Whether the last write failed and waits for a retry.
    pub failing: AtomicBool,
    /// Total time spent in write transactions, in µs.
    pub write_micros: AtomicU64,
    /// Process instances deleted by retention.
    pub retention_deleted: AtomicU64,
    /// Export lag: for each flush written, from the timestamp of its oldest record (when the
    /// engine wrote it) to the commit that made it searchable.
    pub lag: LagHistogram,
}

impl StoreMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Notes a flush committed now whose oldest record was written at `oldest` (epoch ms).
    pub fn committed(&self, oldest: i64) {
        if oldest == i64::MAX {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        self.lag.observe((now - oldest).max(0) as u64);
    }
}

/// Upper bounds of the export lag's buckets, in ms.
pub const LAG_BUCKETS_MS: [u64; 12] = [
    5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000,
];

/// A Prometheus histogram of milliseconds: cumulative counts come from [`Self::buckets`].
#[derive(Debug, Default)]
pub struct LagHistogram {
    /// One count per bucket of [`LAG_BUCKETS_MS`], then those beyond the last.
    counts: [AtomicU64; LAG_BUCKETS_MS.len() + 1],
    sum_ms: AtomicU64,
}

impl LagHistogram {
    pub fn observe(&self, ms: u64) {
        let bucket = LAG_BUCKETS_MS
            .iter()
            .position(|&bound| ms <= bound)
            .unwrap_or(LAG_BUCKETS_MS.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_ms.fetch_add(ms, Ordering::Relaxed);
    }

    /// (upper bound in ms, `None` for +Inf; cumulative count) per bucket, and the sum in ms.
    pub fn buckets(&self) -> (Vec<(Option<u64>, u64)>, u64) {
        let mut total = 0;
        let mut out = Vec::new();
        for (i, count) in self.counts.iter().enumerate() {
            total += count.load(Ordering::Relaxed);
            out.push((LAG_BUCKETS_MS.get(i).copied(), total));
        }
        (out, self.sum_ms.load(Ordering::Relaxed))
    }
}
