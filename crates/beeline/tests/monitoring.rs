//! The started binary's monitoring endpoints: readiness, and Prometheus metrics naming the
//! partition, gateway, backpressure and memory figures operators alert on.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

mod common;

use common::{Broker, get};

#[test]
fn metrics_name_partitions_gateway_backpressure_and_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Broker::start(
        &dir.path().join("data"),
        &["--partitions", "2", "--memory-limit", "100MiB"],
    );
    let monitoring = broker.monitoring;
    let (status, body) = get(monitoring, "/metrics").expect("metrics answer");
    assert!(status.contains(" 200 "), "{status}");
    for line in [
        "beeline_partition_healthy{partition=\"2\"} 1",
        // A single node leads every partition, in term 1.
        "beeline_partition_role{partition=\"1\"} 1",
        "beeline_partition_term{partition=\"2\"} 1",
        "beeline_partition_elections_total{partition=\"1\"} 1",
        "beeline_stream_processor_commands_processed_total{partition=\"1\"} 0",
        "beeline_stream_processor_processing_seconds_total{partition=\"1\"} 0",
        "beeline_backpressure_limit{partition=\"2\"} 100",
        "beeline_backpressure_dropped_total{partition=\"1\"} 0",
        // The state takes half of the node's memory limit.
        "beeline_rocksdb_memory_limit_bytes 52428800",
        "# TYPE beeline_gateway_requests_total counter",
        "# TYPE beeline_gateway_request_duration_seconds histogram",
        "# TYPE beeline_log_flush_duration_seconds histogram",
    ] {
        assert!(
            body.lines().any(|l| l == line),
            "missing {line} in:\n{body}"
        );
    }
    // Nothing processed yet: the write-back buffers hold only what opening wrote (each
    // partition's state format mark), a few hundred bytes at most.
    let buffered = body
        .lines()
        .find_map(|l| l.strip_prefix("beeline_state_write_back_bytes "))
        .and_then(|v| v.parse::<u64>().ok());
    assert!(
        buffered.is_some_and(|b| b < 1024),
        "beeline_state_write_back_bytes {buffered:?} in:\n{body}"
    );
    // Every partition's syncs, bucket by bucket up to +Inf, which equals the count.
    for partition in ["1", "2"] {
        let series = |suffix: &str| -> Vec<&str> {
            let prefix =
                format!("beeline_log_flush_duration_seconds_{suffix}{{partition=\"{partition}\"");
            body.lines().filter(|l| l.starts_with(&prefix)).collect()
        };
        let buckets = series("bucket");
        assert_eq!(buckets.len(), 14, "13 bounds and +Inf:\n{body}");
        let value = |line: &str| line.rsplit(' ').next().map(str::to_owned);
        assert_eq!(
            value(buckets[13]),
            series("count").first().and_then(|l| value(l)),
            "{body}"
        );
    }
    let gauge = |name: &str| -> u64 {
        body.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in:\n{body}"))
    };
    let rss = gauge("process_resident_memory_bytes");
    let allocated = gauge("beeline_allocator_allocated_bytes");
    let resident = gauge("beeline_allocator_resident_bytes");
    assert!(rss > 0, "process_resident_memory_bytes {rss}");
    // The allocator's figures are its own, not copies of the process's.
    assert!(
        0 < allocated && allocated <= resident && resident <= rss,
        "allocated {allocated}, allocator resident {resident}, RSS {rss}"
    );
}
