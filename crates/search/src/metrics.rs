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
}

impl StoreMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}
