use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
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
    /// How long each sync of the log took; on a replicated partition's leader, how long a
    /// write waited for the group's quorum commit (the commit latency).
    pub flush_latency: LatencyHistogram,
    /// Times this replica became its partition's leader (a replicated partition's
    /// elections won; 1 on a single node).
    pub elections: AtomicU64,
    /// Position of the newest record written (0 before the first): what an exporter's lag is
    /// measured against.
    pub last_position: AtomicI64,
}

impl PartitionMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// Upper bounds of a partition's latency buckets (syncs), in seconds.
pub const LATENCY_BOUNDS: [f64; 13] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// Durations counted in fixed buckets, updated without a lock, shown as a Prometheus histogram.
#[derive(Debug)]
pub struct LatencyHistogram {
    /// Upper bounds of the buckets, in seconds, ascending.
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative); the last counts those above every bound.
    buckets: Box<[AtomicU64]>,
    micros: AtomicU64,
}

/// A histogram's figures at one moment, as Prometheus shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// Observations at or below each bound (cumulative).
    pub cumulative: Vec<u64>,
    pub count: u64,
    pub sum_seconds: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new(&LATENCY_BOUNDS)
    }
}

impl LatencyHistogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            micros: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        let bucket = self
            .bounds
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(self.bounds.len());
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

    /// Appends the series of `name` with `labels` (like `rpc="Topology"`) in Prometheus' text
    /// format: a cumulative `_bucket` per bound and `+Inf`, `_sum` and `_count`.
    pub fn render(&self, out: &mut String, name: &str, labels: &str) {
        let snapshot = self.snapshot();
        for (bound, count) in self.bounds.iter().zip(&snapshot.cumulative) {
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {count}");
        }
        let count = snapshot.count;
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", snapshot.sum_seconds);
        let _ = writeln!(out, "{name}_count{{{labels}}} {count}");
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
        let mut out = String::new();
        histogram.render(&mut out, "x_seconds", "partition=\"1\"");
        for line in [
            "x_seconds_bucket{partition=\"1\",le=\"0.0001\"} 2",
            "x_seconds_bucket{partition=\"1\",le=\"1\"} 4",
            "x_seconds_bucket{partition=\"1\",le=\"+Inf\"} 5",
            "x_seconds_count{partition=\"1\"} 5",
        ] {
            assert!(out.lines().any(|l| l == line), "missing {line} in:\n{out}");
        }
        assert_eq!(out.lines().count(), LATENCY_BOUNDS.len() + 3);
    }
}
