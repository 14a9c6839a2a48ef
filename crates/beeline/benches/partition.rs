//! Figures for the durable partition, printed, not asserted: journal appends and syncs per
//! second, and commands per second through the whole processing loop (journal, engine, RocksDB)
//! for a trivial command, with latency percentiles and the process's memory.
//!
//! `cargo bench -p beeline --bench partition [-- --seconds N --clients N]`

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use beeline_log::{FileJournal, FileJournalConfig, Flusher, Journal};
use beeline_protocol::Record;
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_rocksdb::{MemoryBudget, RocksDbStoreConfig, open_partition_store};
use beeline_state::Store;
use beeline_state::snapshot::SnapshotStore;
use beeline_stream::{Partition, PartitionConfig, PartitionMetrics, SystemClock};

mod common;

use common::{arg, status_kib};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn journal(dir: &Path) -> FileJournal {
    FileJournal::open(dir, FileJournalConfig::default()).expect("journal")
}

fn bench_journal(base: &Path) {
    let entry = vec![0x5Au8; 1024];

    let mut j = journal(&base.join("appends"));
    let n = 200_000u64;
    let started = Instant::now();
    for i in 1..=n {
        j.append(i, &entry).expect("append");
    }
    let appended = started.elapsed();
    j.flusher().flush().expect("flush");
    println!(
        "journal: {:>10.0} appends/s  (1 KiB entries, no sync; {n} in {:.2?})",
        n as f64 / appended.as_secs_f64(),
        appended
    );

    let mut j = journal(&base.join("synced"));
    let n = 3_000u64;
    let flusher = j.flusher();
    let started = Instant::now();
    for i in 1..=n {
        j.append(i, &entry).expect("append");
        flusher.flush().expect("flush");
    }
    let elapsed = started.elapsed();
    println!(
        "journal: {:>10.0} fsyncs/s   (one 1 KiB append + fdatasync each)",
        n as f64 / elapsed.as_secs_f64()
    );

    for group in [16u64, 128] {
        let mut j = journal(&base.join(format!("group-{group}")));
        let flusher = j.flusher();
        let n = 100_000u64;
        let started = Instant::now();
        let mut syncs = 0;
        for i in 1..=n {
            j.append(i, &entry).expect("append");
            if i % group == 0 {
                flusher.flush().expect("flush");
                syncs += 1;
            }
        }
        let elapsed = started.elapsed();
        println!(
            "journal: {:>10.0} appends/s  with one fdatasync per {group} appends ({:.0} fsyncs/s)",
            n as f64 / elapsed.as_secs_f64(),
            syncs as f64 / elapsed.as_secs_f64()
        );
    }
}

fn publish(i: u64) -> Record {
    Record::command(
        -1,
        MessageIntent::Publish,
        MessageRecord {
            name: "bench".into(),
            correlation_key: format!("key-{i}"),
            time_to_live: 0,
            variables: b"{}".to_vec(),
            tenant_id: "<default>".into(),
            ..Default::default()
        },
    )
}

fn bench_processing(base: &Path, seconds: u64, clients: u64) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let budget = MemoryBudget::new(128 << 20, 1);
    let store_config = RocksDbStoreConfig {
        runtime_dir: base.join("partition/runtime"),
        budget: budget.clone(),
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(open_partition_store(&store_config, checkpoint)?))
    };
    let handle = {
        let _guard = runtime.enter();
        let mut config = PartitionConfig::new(1);
        config.snapshot_period = None;
        Partition::open(
            config,
            journal(&base.join("partition/log")),
            SnapshotStore::open(base.join("partition/snapshots"), 2).expect("snapshots"),
            &opener,
            Arc::new(SystemClock),
            None,
        )
        .expect("partition")
    };
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let latencies = runtime.block_on(async {
        let mut tasks = Vec::new();
        for client in 0..clients {
            let handle = handle.clone();
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut i = client * 1_000_000_000;
                while Instant::now() < deadline {
                    i += 1;
                    let sent = Instant::now();
                    if handle.execute(publish(i)).await.is_ok() {
                        latencies.push(sent.elapsed().as_micros() as u64);
                    }
                }
                latencies
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("client"));
        }
        all
    });
    let elapsed = started.elapsed().as_secs_f64();
    let metrics = handle.metrics();
    let mut latencies = latencies;
    latencies.sort_unstable();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "processing: {:>8.0} commands/s  ({clients} clients, publish with ttl 0, RocksDB state, fsync per group)",
        latencies.len() as f64 / elapsed
    );
    println!(
        "processing: {:>8.0} appends/s, {:.0} fsyncs/s, {:.1} records per command",
        PartitionMetrics::get(&metrics.appends) as f64 / elapsed,
        PartitionMetrics::get(&metrics.flushes) as f64 / elapsed,
        PartitionMetrics::get(&metrics.records_written) as f64 / latencies.len().max(1) as f64
    );
    println!(
        "processing: latency p50 {} µs, p99 {} µs, p99.9 {} µs, max {} µs",
        pct(0.5),
        pct(0.99),
        pct(0.999),
        latencies.last().copied().unwrap_or(0)
    );
    println!(
        "processing: RocksDB cache {:.1} MiB of a {:.0} MiB budget",
        budget.usage() as f64 / 1048576.0,
        budget.limit() as f64 / 1048576.0
    );
    runtime.block_on(handle.shutdown());
}

fn main() {
    // `cargo bench` passes `--bench`; accept and ignore it.
    let seconds = arg("--seconds", 10);
    let clients = arg("--clients", 64);
    let base = tempfile::Builder::new()
        .prefix("beeline-bench-")
        .tempdir_in(std::env::var("BEELINE_BENCH_DIR").unwrap_or_else(|_| ".".into()))
        .expect("bench directory");
    println!(
        "# beeline partition benchmark (in {})",
        base.path().display()
    );
    bench_journal(base.path());
    bench_processing(base.path(), seconds, clients);
    println!(
        "memory: RSS {} KiB now, peak {} KiB",
        status_kib("VmRSS:"),
        status_kib("VmHWM:")
    );
}
