//! Figures for the durable partition, printed, not asserted: journal appends and syncs per
//! second, commands per second through the whole processing loop (journal, engine, RocksDB)
//! for a trivial command, with latency percentiles and the process's memory, and instances
//! through the same loop without the gateway, with the CPU time each one costs: `beeline
//! bench`'s one-task instances, and instances of a model with a multi-instance sub-process and
//! a call activity, and the CPU time replaying each log into a fresh state takes (what a
//! follower and recovery spend per instance).
//!
//! `cargo bench -p beeline --bench partition [-- --seconds N --clients N --only SECTION]`
//! (sections: `journal`, `processing`, `instances`, `structured`)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use beeline_log::{FileJournal, FileJournalConfig, Flusher, Journal};
use beeline_protocol::intent::{
    DeploymentIntent, JobBatchIntent, JobIntent, MessageIntent, ProcessInstanceCreationIntent,
};
use beeline_protocol::value::{
    DeploymentRecord, DeploymentResource, JobBatchRecord, JobRecord, MessageRecord,
    ProcessInstanceCreationRecord,
};
use beeline_protocol::{Record, RecordType};
use beeline_rocksdb::{MemoryBudget, RocksDbStoreConfig, open_partition_store};
use beeline_state::Store;
use beeline_state::snapshot::SnapshotStore;
use beeline_stream::{
    Partition, PartitionConfig, PartitionHandle, PartitionMetrics, SystemClock, rebuild_state,
};

mod common;

use common::{arg, option, status_kib};

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

    // The first segment's blocks are only reserved (fallocate); the next is prepared with
    // zeros while the first fills. One sync after each 3 KiB append, in each kind, in this run.
    let segment_size = 8 << 20;
    let config = FileJournalConfig {
        segment_size,
        ..FileJournalConfig::default()
    };
    let mut j = FileJournal::open(base.join("prepared"), config).expect("journal");
    let entry3 = vec![0x5Au8; 3 * 1024];
    let mut next = 1u64;
    let (reserved, reserved_cpu) = sync_each(&mut j, &mut next, &entry3, 1_000);
    // Fill the first segment; its spare is complete by three quarters.
    while next < segment_size / (3 * 1024 + 32) * 3 / 4 {
        j.append(next, &entry3).expect("append");
        next += 1;
    }
    while !j.next_segment_prepared() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let first_segment = segment_size / (3 * 1024 + 32) + 100;
    while next < first_segment {
        j.append(next, &entry3).expect("append");
        next += 1;
    }
    let (prepared, prepared_cpu) = sync_each(&mut j, &mut next, &entry3, 1_000);
    println!(
        "journal: sync after a 3 KiB append: {reserved:.2?} ({reserved_cpu:.2?} CPU) into reserved \
         blocks, {prepared:.2?} ({prepared_cpu:.2?} CPU) into a segment prepared with zeros"
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

/// Appends `n` entries with a sync after each; the mean time and CPU time of one.
fn sync_each(j: &mut FileJournal, next: &mut u64, entry: &[u8], n: u32) -> (Duration, Duration) {
    let flusher = j.flusher();
    let (started, cpu) = (Instant::now(), cpu_time());
    for _ in 0..n {
        j.append(*next, entry).expect("append");
        flusher.flush().expect("flush");
        *next += 1;
    }
    (started.elapsed() / n, (cpu_time() - cpu) / n)
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

/// One partition on the real stack (file journal, RocksDB with a 128 MiB budget) in `dir`.
fn open_partition(
    runtime: &tokio::runtime::Runtime,
    dir: &Path,
) -> (PartitionHandle, MemoryBudget) {
    let budget = MemoryBudget::new(128 << 20, 1);
    let store_config = RocksDbStoreConfig {
        runtime_dir: dir.join("runtime"),
        budget: budget.clone(),
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(open_partition_store(&store_config, checkpoint)?))
    };
    let _guard = runtime.enter();
    let mut config = PartitionConfig::new(1);
    config.snapshot_period = None;
    // An exporter that never acknowledges: snapshots by size go on, the log stays whole for
    // the replay that follows a load.
    config.exporters = vec!["bench-replay".to_string()];
    let handle = Partition::open(
        config,
        journal(&dir.join("log")),
        SnapshotStore::open(dir.join("snapshots"), 2).expect("snapshots"),
        &opener,
        Arc::new(SystemClock),
        None,
    )
    .expect("partition");
    (handle, budget)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// CPU time (user + system) this process has used so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn event(answer: Result<Record, beeline_stream::PartitionError>, what: &str) -> Record {
    match answer {
        Ok(record) if record.record_type == RecordType::Event => record,
        other => panic!("{what}: {other:?}"),
    }
}

/// Instances of a model through the loop without the gateway: each client creates an
/// instance with a 1 KiB payload, then activates up to `jobs_per_instance` jobs and completes
/// them with the payload, over and over. The CPU time per instance is the engine's, the
/// journal's and RocksDB's (and the clients' few channel sends): what a gRPC request adds on
/// top is not in it.
struct InstanceLoad {
    /// The section's name, and how its lines start.
    name: &'static str,
    /// What the instances are, for the report.
    description: &'static str,
    /// Resources deployed together: (name, BPMN).
    resources: Vec<(String, String)>,
    process_id: String,
    job_type: String,
    /// Jobs an instance has: the instances completed are the jobs completed over this.
    jobs_per_instance: u64,
    /// Variables the instances start with besides the payload and the tool's own.
    fields: Vec<(&'static str, String)>,
}

/// `beeline bench`'s one-task instances.
fn one_task_load() -> InstanceLoad {
    let model = beeline_bench::Model::new(beeline_bench::ProcessKind::OneTask);
    InstanceLoad {
        name: "instances",
        description: "one-task instances",
        resources: vec![(model.resource_name.clone(), model.xml.clone())],
        process_id: model.bpmn_process_id.clone(),
        job_type: beeline_bench::JOB_TYPE.to_string(),
        jobs_per_instance: 1,
        fields: Vec::new(),
    }
}

/// A parallel multi-instance sub-process over three items (a job each), then a call activity
/// whose child process has one job: four jobs and two process instances per instance.
fn structured_load() -> InstanceLoad {
    const JOB_TYPE: &str = "beeline-bench-structured";
    let definitions = |process: &str| {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="definitions" targetNamespace="http://beeline.bench">{process}</bpmn:definitions>"#
        )
    };
    let task = |id: &str| {
        format!(
            r#"<bpmn:serviceTask id="{id}"><bpmn:extensionElements><zeebe:taskDefinition type="{JOB_TYPE}"/></bpmn:extensionElements></bpmn:serviceTask>"#
        )
    };
    let child = definitions(&format!(
        r#"<bpmn:process id="bench-child" isExecutable="true"><bpmn:startEvent id="start"/><bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="work"/>{}<bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="end"/><bpmn:endEvent id="end"/></bpmn:process>"#,
        task("work")
    ));
    let parent = definitions(&format!(
        r#"<bpmn:process id="bench-structured" isExecutable="true"><bpmn:startEvent id="start"/><bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="each"/><bpmn:subProcess id="each"><bpmn:multiInstanceLoopCharacteristics><bpmn:extensionElements><zeebe:loopCharacteristics inputCollection="=items" inputElement="item"/></bpmn:extensionElements></bpmn:multiInstanceLoopCharacteristics><bpmn:startEvent id="item-start"/><bpmn:sequenceFlow id="f2" sourceRef="item-start" targetRef="item-work"/>{}<bpmn:sequenceFlow id="f3" sourceRef="item-work" targetRef="item-end"/><bpmn:endEvent id="item-end"/></bpmn:subProcess><bpmn:sequenceFlow id="f4" sourceRef="each" targetRef="call"/><bpmn:callActivity id="call"><bpmn:extensionElements><zeebe:calledElement processId="bench-child"/></bpmn:extensionElements></bpmn:callActivity><bpmn:sequenceFlow id="f5" sourceRef="call" targetRef="end"/><bpmn:endEvent id="end"/></bpmn:process>"#,
        task("item-work")
    ));
    InstanceLoad {
        name: "structured",
        description: "structured instances",
        resources: vec![
            ("bench-child.bpmn".to_string(), child),
            ("bench-structured.bpmn".to_string(), parent),
        ],
        process_id: "bench-structured".to_string(),
        job_type: JOB_TYPE.to_string(),
        jobs_per_instance: 4,
        fields: vec![("items", "[1, 2, 3]".to_string())],
    }
}

fn bench_instances(base: &Path, seconds: u64, clients: u64, load: InstanceLoad) {
    let runtime = runtime();
    let (handle, _budget) = open_partition(&runtime, &base.join(load.name));
    let payload = beeline_bench::payload(1024);
    let deployed = runtime.block_on(
        handle.execute(Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord {
                resources: load
                    .resources
                    .iter()
                    .map(|(name, xml)| DeploymentResource {
                        resource: xml.clone().into_bytes(),
                        resource_name: name.clone(),
                    })
                    .collect(),
                ..Default::default()
            },
        )),
    );
    event(deployed, "the deployment");
    let load = Arc::new(load);
    let started = Instant::now();
    let cpu_before = cpu_time();
    let deadline = started + Duration::from_secs(seconds);
    let completed_jobs: u64 = runtime.block_on(async {
        let mut tasks = Vec::new();
        for client in 0..clients {
            let handle = handle.clone();
            let load = load.clone();
            let payload = payload.clone();
            tasks.push(tokio::spawn(async move {
                let mut completed = 0u64;
                let mut seq = 0u64;
                while Instant::now() < deadline {
                    seq += 1;
                    let mut fields = vec![
                        ("benchKey", format!("\"{client}-{seq}\"")),
                        ("benchJobT", "0".to_string()),
                    ];
                    fields.extend(load.fields.iter().cloned());
                    let creation = ProcessInstanceCreationRecord {
                        bpmn_process_id: load.process_id.clone(),
                        version: -1,
                        variables: beeline_bench::with_fields(&fields, &payload).into_bytes(),
                        ..Default::default()
                    };
                    let command =
                        Record::command(-1, ProcessInstanceCreationIntent::Create, creation);
                    event(handle.execute(command).await, "the creation");
                    let activation = JobBatchRecord {
                        r#type: load.job_type.clone(),
                        worker: "bench".to_string(),
                        timeout: 60_000,
                        max_jobs_to_activate: load.jobs_per_instance as i32,
                        ..Default::default()
                    };
                    let command = Record::command(-1, JobBatchIntent::Activate, activation);
                    let batch = event(handle.execute(command).await, "the activation");
                    let keys = batch
                        .value_as::<JobBatchRecord>()
                        .map(|b| b.job_keys.clone())
                        .unwrap_or_default();
                    for key in keys {
                        // As the tool's workers do: the payload and a changed `benchJobT`.
                        let fields = [("benchJobT", seq.to_string())];
                        let completion = JobRecord {
                            variables: beeline_bench::with_fields(&fields, &payload).into_bytes(),
                            ..Default::default()
                        };
                        let command = Record::command(key, JobIntent::Complete, completion);
                        event(handle.execute(command).await, "the completion");
                        completed += 1;
                    }
                }
                completed
            }));
        }
        let mut all = 0;
        for task in tasks {
            all += task.await.expect("client");
        }
        all
    });
    let completed = completed_jobs / load.jobs_per_instance;
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = (cpu_time() - cpu_before).as_secs_f64();
    let metrics = handle.metrics();
    let per_instance = |n: u64| n as f64 / completed.max(1) as f64;
    println!(
        "{}: {:>8.0} {}/s ({clients} clients, 1 KiB payload, no gateway)",
        load.name,
        completed as f64 / elapsed,
        load.description
    );
    println!(
        "{}: {:>8.1} µs CPU per instance ({:.0}% of a core), {:.1} records, {:.2} fsyncs",
        load.name,
        cpu * 1e6 / completed.max(1) as f64,
        100.0 * cpu / elapsed,
        per_instance(PartitionMetrics::get(&metrics.records_written)),
        per_instance(PartitionMetrics::get(&metrics.flushes)),
    );
    runtime.block_on(handle.shutdown());
    bench_replay(&base.join(load.name), &load, completed, cpu);
}

/// The log the load wrote, replayed into a fresh state as a follower and recovery replay it:
/// the CPU per instance beside what processing it took.
fn bench_replay(dir: &Path, load: &InstanceLoad, instances: u64, processing_cpu: f64) {
    let store_config = RocksDbStoreConfig {
        runtime_dir: dir.join("replayed"),
        budget: MemoryBudget::new(128 << 20, 1),
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(open_partition_store(&store_config, checkpoint)?))
    };
    let snapshots = SnapshotStore::open(dir.join("replayed-snapshots"), 2).expect("snapshots");
    let log = journal(&dir.join("log"));
    let reader = log.log_reader();
    let started = Instant::now();
    let cpu_before = cpu_time();
    let store =
        rebuild_state(&PartitionConfig::new(1), &snapshots, None, &opener, reader).expect("replay");
    let cpu = (cpu_time() - cpu_before).as_secs_f64();
    let elapsed = started.elapsed().as_secs_f64();
    drop(store);
    println!(
        "{}: {:>8.1} µs CPU per instance replayed ({:.0}% of processing's; {:.0} instances/s)",
        load.name,
        cpu * 1e6 / instances.max(1) as f64,
        100.0 * cpu / processing_cpu,
        instances as f64 / elapsed
    );
}

fn bench_processing(base: &Path, seconds: u64, clients: u64) {
    let runtime = runtime();
    let (handle, budget) = open_partition(&runtime, &base.join("partition"));
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
    let only = option("--only");
    let runs = |section: &str| only.as_deref().is_none_or(|o| o == section);
    if runs("journal") {
        bench_journal(base.path());
    }
    if runs("processing") {
        bench_processing(base.path(), seconds, clients);
    }
    if runs("instances") {
        bench_instances(base.path(), seconds, clients, one_task_load());
    }
    if runs("structured") {
        bench_instances(base.path(), seconds, clients, structured_load());
    }
    println!(
        "memory: RSS {} KiB now, peak {} KiB",
        status_kib("VmRSS:"),
        status_kib("VmHWM:")
    );
}
