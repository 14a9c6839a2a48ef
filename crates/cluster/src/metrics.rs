//! What a partition's Raft group counts beside openraft's own metrics (term, state, matched
//! indexes), for the broker's Prometheus endpoint.

use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds (milliseconds) of the commit latency histogram's buckets; a last bucket
/// holds everything above.
pub const COMMIT_LATENCY_BUCKETS_MS: [f64; 12] = [
    0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 5000.0,
];

/// A partition group's counters.
#[derive(Debug, Default)]
pub struct GroupMetrics {
    /// Snapshots this replica sent whole to another replica, as leader.
    pub snapshots_sent: AtomicU64,
    /// Snapshot sends that failed or were cut off (openraft sends again later).
    pub snapshot_sends_failed: AtomicU64,
    /// Snapshots received from a leader and installed.
    pub snapshots_installed: AtomicU64,
    /// From a leader's proposal of a batch to its commit by a quorum.
    pub commit_latency: Histogram,
}

impl GroupMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// A histogram of durations with fixed buckets ([`COMMIT_LATENCY_BUCKETS_MS`]).
#[derive(Debug, Default)]
pub struct Histogram {
    /// Per bucket (not cumulative); the last is above every bound.
    counts: [AtomicU64; COMMIT_LATENCY_BUCKETS_MS.len() + 1],
    sum_micros: AtomicU64,
}

impl Histogram {
    pub fn observe(&self, elapsed: std::time::Duration) {
        let ms = elapsed.as_secs_f64() * 1000.0;
        let bucket = COMMIT_LATENCY_BUCKETS_MS
            .iter()
            .position(|&bound| ms <= bound)
            .unwrap_or(COMMIT_LATENCY_BUCKETS_MS.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
    }

    /// Cumulative counts per bound (seconds), then the total count and the sum in seconds:
    /// Prometheus' histogram shape.
    pub fn snapshot(&self) -> (Vec<(f64, u64)>, u64, f64) {
        let mut cumulative = 0;
        let mut buckets = Vec::with_capacity(COMMIT_LATENCY_BUCKETS_MS.len());
        for (bound, count) in COMMIT_LATENCY_BUCKETS_MS.iter().zip(&self.counts) {
            cumulative += count.load(Ordering::Relaxed);
            buckets.push((bound / 1000.0, cumulative));
        }
        let total =
            cumulative + self.counts[COMMIT_LATENCY_BUCKETS_MS.len()].load(Ordering::Relaxed);
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        (buckets, total, sum)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn observations_land_in_cumulative_buckets() {
        let histogram = Histogram::default();
        histogram.observe(Duration::from_micros(300));
        histogram.observe(Duration::from_millis(3));
        histogram.observe(Duration::from_secs(10));
        let (buckets, total, sum) = histogram.snapshot();
        assert_eq!(total, 3);
        assert_eq!(buckets[0], (0.0005, 1));
        assert_eq!(buckets[3], (0.005, 2));
        assert_eq!(buckets.last().map(|b| b.1), Some(2));
        assert!((sum - 10.0033).abs() < 1e-6, "{sum}");
    }
}
