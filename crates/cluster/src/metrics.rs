//! What a partition's Raft group counts beside openraft's own metrics (term, state, matched
//! indexes), for the broker's Prometheus endpoint.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use openraft::type_config::async_runtime::watch::WatchReceiver;

use crate::storage::FlushCounts;
use crate::transport::PartitionRaft;
use crate::types::NodeId;

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
    /// AppendEntries requests this replica sent as leader (heartbeats included), and the
    /// entries they carried: their ratio is the entries per request.
    pub appends_sent: AtomicU64,
    pub entries_sent: AtomicU64,
    /// Replication calls to a follower (heartbeats included) that failed: it could not be
    /// reached, answered with an error or not in time, or ended the call with requests
    /// unanswered. openraft sends again at its next heartbeat or after its backoff.
    pub appends_failed: AtomicU64,
}

impl GroupMetrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Cumulative counts per bound (seconds), the total count and the sum in seconds.
pub type HistogramSnapshot = (Vec<(f64, u64)>, u64, f64);

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
    pub fn snapshot(&self) -> HistogramSnapshot {
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

/// One partition group's figures at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupReport {
    pub partition_id: u32,
    /// While this replica leads: each follower's entries behind the leader's last (the
    /// leader's last log index minus the follower's matched index).
    pub lag: Vec<(NodeId, u64)>,
    /// While this replica leads: entries in its log past the commit.
    pub uncommitted: Option<u64>,
    pub appends_sent: u64,
    pub entries_sent: u64,
    pub appends_failed: u64,
    pub snapshots_sent: u64,
    pub snapshot_sends_failed: u64,
    pub snapshots_installed: u64,
    /// Cumulative buckets (seconds), count and sum (seconds) of the commit latency.
    pub commit_latency: HistogramSnapshot,
}

impl GroupReport {
    pub fn of(partition_id: u32, raft: &PartitionRaft, metrics: &GroupMetrics) -> Self {
        let (lag, uncommitted, node) = {
            let now = raft.metrics();
            let now = now.borrow_watched();
            let last = now.last_log_index;
            let uncommitted = (now.state == openraft::ServerState::Leader).then(|| {
                let committed = now.local_committed.map_or(0, |c| c.index + 1);
                last.map_or(0, |l| (l + 1).saturating_sub(committed))
            });
            let lag = now
                .replication
                .as_ref()
                .map(|followers| {
                    followers
                        .iter()
                        .map(|(node, matched)| {
                            let next = matched.map_or(0, |m| m.index + 1);
                            (*node, last.map_or(0, |l| (l + 1).saturating_sub(next)))
                        })
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            (lag, uncommitted, now.id)
        };
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        Self {
            partition_id,
            lag: lag.into_iter().filter(|(n, _)| *n != node).collect(),
            uncommitted,
            appends_sent: load(&metrics.appends_sent),
            entries_sent: load(&metrics.entries_sent),
            appends_failed: load(&metrics.appends_failed),
            snapshots_sent: load(&metrics.snapshots_sent),
            snapshot_sends_failed: load(&metrics.snapshot_sends_failed),
            snapshots_installed: load(&metrics.snapshots_installed),
            commit_latency: metrics.commit_latency.snapshot(),
        }
    }
}

/// Writes the groups' figures in Prometheus' text format, one series per partition (and
/// follower).
pub fn render(out: &mut String, reports: &[GroupReport]) {
    fn family(out: &mut String, name: &str, kind: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }
    family(
        out,
        "beeline_raft_replication_lag_entries",
        "gauge",
        "Entries a follower is behind the leader's last (the leader's view; reported by the \
         leader only).",
    );
    for report in reports {
        for (follower, lag) in &report.lag {
            let _ = writeln!(
                out,
                "beeline_raft_replication_lag_entries{{partition=\"{}\",follower=\"{follower}\"}} {lag}",
                report.partition_id
            );
        }
    }
    family(
        out,
        "beeline_raft_uncommitted_entries",
        "gauge",
        "Entries in the leader's log past the commit (reported by the leader only).",
    );
    for report in reports {
        if let Some(uncommitted) = report.uncommitted {
            let _ = writeln!(
                out,
                "beeline_raft_uncommitted_entries{{partition=\"{}\"}} {uncommitted}",
                report.partition_id
            );
        }
    }
    type Counter = (&'static str, &'static str, fn(&GroupReport) -> u64);
    let counters: [Counter; 6] = [
        (
            "beeline_raft_append_entries_sent_total",
            "AppendEntries requests this broker sent as leader, heartbeats included.",
            |r| r.appends_sent,
        ),
        (
            "beeline_raft_entries_sent_total",
            "Log entries the AppendEntries requests this broker sent as leader carried.",
            |r| r.entries_sent,
        ),
        (
            "beeline_raft_append_entries_failed_total",
            "Replication calls to a follower, heartbeats included, that failed (unreachable, an \
             error or a late answer, the call ended early); sent again at the next heartbeat or \
             after a backoff.",
            |r| r.appends_failed,
        ),
        (
            "beeline_raft_snapshots_sent_total",
            "Snapshots this broker sent whole to a replica that needed entries already purged.",
            |r| r.snapshots_sent,
        ),
        (
            "beeline_raft_snapshot_sends_failed_total",
            "Snapshot sends that failed or were cut off (sent again later).",
            |r| r.snapshot_sends_failed,
        ),
        (
            "beeline_raft_snapshots_installed_total",
            "Snapshots received from the leader and installed.",
            |r| r.snapshots_installed,
        ),
    ];
    for (name, help, value) in counters {
        family(out, name, "counter", help);
        for report in reports {
            let _ = writeln!(
                out,
                "{name}{{partition=\"{}\"}} {}",
                report.partition_id,
                value(report)
            );
        }
    }
    let name = "beeline_raft_commit_latency_seconds";
    family(
        out,
        name,
        "histogram",
        "From the leader's proposal of a batch to its commit by a quorum.",
    );
    for report in reports {
        let labels = format!("partition=\"{}\"", report.partition_id);
        histogram(out, name, &labels, &report.commit_latency);
    }
}

/// Writes the broker's journal flusher's figures (every Raft group's syncs, one series each).
pub fn render_flusher(out: &mut String, counts: &FlushCounts) {
    let counters = [
        (
            "beeline_raft_log_syncs_total",
            "Syncs (fdatasync) of the Raft groups' journals by the broker's flusher.",
            counts.syncs,
        ),
        (
            "beeline_raft_log_syncs_failed_total",
            "Journal syncs that failed (their appends failed with them).",
            counts.failed,
        ),
        (
            "beeline_raft_log_sync_requests_total",
            "Appends and barriers the syncs completed: divided by the syncs, the appends \
             each sync covered.",
            counts.completed,
        ),
    ];
    for (name, help, value) in counters {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
        );
    }
    let name = "beeline_raft_log_sync_duration_seconds";
    let _ = writeln!(
        out,
        "# HELP {name} How long one journal sync took.\n# TYPE {name} histogram"
    );
    histogram(out, name, "", &counts.latency);
}

/// One histogram's series in Prometheus' text format; `labels` go before `le`.
fn histogram(
    out: &mut String,
    name: &str,
    labels: &str,
    (buckets, count, sum): &HistogramSnapshot,
) {
    let sep = if labels.is_empty() { "" } else { "," };
    for (bound, cumulative) in buckets {
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}"
        );
    }
    let braces = if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    };
    let _ = writeln!(
        out,
        "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {count}\n\
         {name}_sum{braces} {sum}\n\
         {name}_count{braces} {count}"
    );
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

    #[test]
    fn reports_render_as_prometheus_families() {
        let histogram = Histogram::default();
        histogram.observe(Duration::from_millis(3));
        let report = GroupReport {
            partition_id: 2,
            lag: vec![(1, 0), (2, 17)],
            uncommitted: Some(5),
            appends_sent: 4,
            entries_sent: 9,
            appends_failed: 6,
            snapshots_sent: 3,
            snapshot_sends_failed: 1,
            snapshots_installed: 0,
            commit_latency: histogram.snapshot(),
        };
        let mut out = String::new();
        render(&mut out, &[report]);
        for line in [
            "# TYPE beeline_raft_replication_lag_entries gauge",
            "beeline_raft_replication_lag_entries{partition=\"2\",follower=\"2\"} 17",
            "beeline_raft_snapshots_sent_total{partition=\"2\"} 3",
            "beeline_raft_uncommitted_entries{partition=\"2\"} 5",
            "beeline_raft_append_entries_sent_total{partition=\"2\"} 4",
            "beeline_raft_entries_sent_total{partition=\"2\"} 9",
            "beeline_raft_append_entries_failed_total{partition=\"2\"} 6",
            "beeline_raft_snapshot_sends_failed_total{partition=\"2\"} 1",
            "beeline_raft_snapshots_installed_total{partition=\"2\"} 0",
            "beeline_raft_commit_latency_seconds_bucket{partition=\"2\",le=\"0.005\"} 1",
            "beeline_raft_commit_latency_seconds_bucket{partition=\"2\",le=\"+Inf\"} 1",
            "beeline_raft_commit_latency_seconds_count{partition=\"2\"} 1",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} missing in\n{out}");
        }
    }

    #[test]
    fn the_flusher_renders_as_broker_wide_series() {
        let histogram = Histogram::default();
        histogram.observe(Duration::from_micros(400));
        histogram.observe(Duration::from_millis(2));
        let counts = FlushCounts {
            syncs: 2,
            failed: 1,
            completed: 7,
            latency: histogram.snapshot(),
        };
        let mut out = String::new();
        render_flusher(&mut out, &counts);
        for line in [
            "# TYPE beeline_raft_log_syncs_total counter",
            "beeline_raft_log_syncs_total 2",
            "beeline_raft_log_syncs_failed_total 1",
            "beeline_raft_log_sync_requests_total 7",
            "# TYPE beeline_raft_log_sync_duration_seconds histogram",
            "beeline_raft_log_sync_duration_seconds_bucket{le=\"0.0005\"} 1",
            "beeline_raft_log_sync_duration_seconds_bucket{le=\"0.0025\"} 2",
            "beeline_raft_log_sync_duration_seconds_bucket{le=\"+Inf\"} 2",
            "beeline_raft_log_sync_duration_seconds_sum 0.0024",
            "beeline_raft_log_sync_duration_seconds_count 2",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} missing in\n{out}");
        }
    }
}
