use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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
    /// How long each sync of the log took.
    pub flush_latency: LatencyHistogram,
}

impl PartitionMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// Upper bounds of [`LatencyHistogram`]'s buckets, in seconds.
pub const LATENCY_BOUNDS: [f64; 13] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// Durations counted in fixed buckets ([`LATENCY_BOUNDS`]), updated without a lock.
#[derive(Debug, Default)]
pub struct LatencyHistogram {
    /// Observations per bucket (not cumulative); the last counts those above every bound.
    buckets: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    micros: AtomicU64,
}

/// A histogram's figures at one moment, as Prometheus shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// Observations at or below each of [`LATENCY_BOUNDS`] (cumulative).
    pub cumulative: Vec<u64>,
    pub count: u64,
    pub sum_seconds: f64,
}

impl LatencyHistogram {
    pub fn observe(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        let bucket = LATENCY_BOUNDS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(LATENCY_BOUNDS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut running = 0;
        let mut cumulative: Vec<u64> = self
            .buckets
            .iter()
            .map(|bucket| {
                running += bucket.load(Ordering::Relaxed);
                running
            })
            .collect();
        let count = cumulative.pop().unwrap_or(0);
        HistogramSnapshot {
            cumulative,
            count,
            sum_seconds: self.micros.load(Ordering::Relaxed) as f64 / 1e6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_counts_each_duration_in_its_bucket_and_the_ones_above() {
        let histogram = LatencyHistogram::default();
        for micros in [50, 100, 300, 2_000, 2_000_000] {
            histogram.observe(Duration::from_micros(micros));
        }
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.cumulative.len(), LATENCY_BOUNDS.len());
        // <= 0.1 ms: two (the bound is inclusive); <= 0.5 ms: three; <= 2.5 ms: four; the
        // two seconds are above every bound and only in the count.
        assert_eq!(
            snapshot.cumulative,
            vec![2, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4]
        );
        assert_eq!(snapshot.count, 5);
        assert!((snapshot.sum_seconds - 2.00245).abs() < 1e-9);
    }
}
