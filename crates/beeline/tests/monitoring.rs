//! The started binary's monitoring endpoints: readiness, and Prometheus metrics naming the
//! partition, gateway, backpressure and memory figures operators alert on.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port that was free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("an ephemeral port")
}

/// `GET path` over HTTP/1.0: (status line, body).
fn get(port: u16, path: &str) -> Option<(String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_owned(), body.to_owned()))
}

struct Broker(Child);

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn metrics_name_partitions_gateway_backpressure_and_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let monitoring = free_port();
    let _broker = Broker(
        Command::new(env!("CARGO_BIN_EXE_beeline"))
            .args(["broker", "--host", "127.0.0.1", "--partitions", "2"])
            .args(["--memory-limit", "100MiB"])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--grpc-port", &free_port().to_string()])
            .args(["--rest-port", &free_port().to_string()])
            .args(["--monitoring-port", &monitoring.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the beeline binary starts"),
    );
    let started = Instant::now();
    while get(monitoring, "/ready").is_none_or(|(status, _)| !status.contains(" 20")) {
        assert!(started.elapsed() < Duration::from_secs(30), "never ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, body) = get(monitoring, "/metrics").expect("metrics answer");
    assert!(status.contains(" 200 "), "{status}");
    for line in [
        "beeline_partition_healthy{partition=\"2\"} 1",
        "beeline_stream_processor_commands_processed_total{partition=\"1\"} 0",
        "beeline_stream_processor_processing_seconds_total{partition=\"1\"} 0",
        "beeline_backpressure_limit{partition=\"2\"} 100",
        "beeline_backpressure_dropped_total{partition=\"1\"} 0",
        // The state takes half of the node's memory limit.
        "beeline_rocksdb_memory_limit_bytes 52428800",
        "# TYPE beeline_gateway_requests_total counter",
        "# TYPE beeline_gateway_request_duration_seconds histogram",
    ] {
        assert!(
            body.lines().any(|l| l == line),
            "missing {line} in:\n{body}"
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
