//! Figures for waiting processes, printed, not asserted: a partition with many open timers
//! and message subscriptions (RocksDB state, real clock), how fast they open, how late the
//! timers fire (due date to the trigger being committed and readable), and how commands that
//! arrive meanwhile fare.
//!
//! `cargo bench -p beeline --bench events [-- --timers N --subscriptions N --window S]`
//!
//! Phases: (1) open `--subscriptions` instances waiting at a message catch event and
//! `--timers` instances waiting at a timer, the timers due at absolute dates spread evenly
//! over `--window` seconds starting once everything is open; (2) while the timers fire, a
//! client publishes a message for every waiting instance, at a steady rate; the log is read
//! as it is committed to see when each timer triggered.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use beeline_log::{FileJournal, FileJournalConfig};
use beeline_protocol::intent::{
    DeploymentIntent, MessageIntent, ProcessInstanceCreationIntent, ProcessInstanceIntent,
    TimerIntent,
};
use beeline_protocol::value::{
    DeploymentRecord, DeploymentResource, MessageRecord, ProcessInstanceCreationRecord,
    ProcessInstanceRecord, TimerRecord,
};
use beeline_protocol::{Intent, Record, RecordType};
use beeline_rocksdb::{MemoryBudget, RocksDbStoreConfig, open_partition_store};
use beeline_state::Store;
use beeline_state::snapshot::SnapshotStore;
use beeline_stream::{LocalRouter, Partition, PartitionConfig, PartitionHandle, SystemClock};

mod common;

use common::{arg, status_kib};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const TIMED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="bench">
  <bpmn:process id="timed" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait">
      <bpmn:timerEventDefinition><bpmn:timeDate>=due</bpmn:timeDate></bpmn:timerEventDefinition>
    </bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>"#;

const WAITING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="bench">
  <bpmn:message id="m" name="bench-message">
    <bpmn:extensionElements><zeebe:subscription correlationKey="=key"/></bpmn:extensionElements>
  </bpmn:message>
  <bpmn:process id="waiting" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>"#;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// An ISO 8601 UTC date-time for epoch milliseconds.
fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn percentiles(mut values: Vec<i64>) -> String {
    if values.is_empty() {
        return "none".into();
    }
    values.sort_unstable();
    let at = |p: f64| values[((values.len() as f64 * p) as usize).min(values.len() - 1)];
    format!(
        "p50 {} ms, p90 {} ms, p99 {} ms, max {} ms ({} samples)",
        at(0.5),
        at(0.9),
        at(0.99),
        values[values.len() - 1],
        values.len()
    )
}

async fn create(handle: &PartitionHandle, process: &str, variables: String) -> bool {
    let command = Record::command(
        -1,
        ProcessInstanceCreationIntent::Create,
        ProcessInstanceCreationRecord {
            bpmn_process_id: process.into(),
            version: -1,
            variables: variables.into_bytes(),
            ..Default::default()
        },
    );
    loop {
        match handle.execute(command.clone()).await {
            Ok(record) => return record.record_type == RecordType::Event,
            // Shed under load: try again, as a client would.
            Err(beeline_stream::PartitionError::ResourceExhausted(_)) => {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Err(_) => return false,
        }
    }
}

fn main() {
    let timers = arg("--timers", 100_000);
    let subscriptions = arg("--subscriptions", 100_000);
    let window_s = arg("--window", 60) as i64;
    let clients = arg("--clients", 32);
    let base = tempfile::Builder::new()
        .prefix("beeline-bench-events-")
        .tempdir_in(std::env::var("BEELINE_BENCH_DIR").unwrap_or_else(|_| ".".into()))
        .expect("bench directory");
    println!(
        "# beeline events benchmark: {timers} timers, {subscriptions} message subscriptions, timers due over {window_s} s (in {})",
        base.path().display()
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let budget = MemoryBudget::new(256 << 20, 1);
    let store_config = RocksDbStoreConfig {
        runtime_dir: base.path().join("partition/runtime"),
        budget: budget.clone(),
    };
    let opener = move |checkpoint: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(open_partition_store(&store_config, checkpoint)?))
    };
    let router = LocalRouter::new();
    let handle = {
        let _guard = runtime.enter();
        let mut config = PartitionConfig::new(1);
        config.snapshot_period = None;
        let handle = Partition::open(
            config,
            FileJournal::open(
                base.path().join("partition/log"),
                FileJournalConfig::default(),
            )
            .expect("journal"),
            SnapshotStore::open(base.path().join("partition/snapshots"), 2).expect("snapshots"),
            &opener,
            Arc::new(SystemClock),
            Some(router.clone()),
        )
        .expect("partition");
        router.set_partition(handle.clone());
        handle
    };

    runtime.block_on(async {
        let deployment = Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord {
                resources: vec![
                    DeploymentResource {
                        resource_name: "timed.bpmn".into(),
                        resource: TIMED.as_bytes().to_vec(),
                    },
                    DeploymentResource {
                        resource_name: "waiting.bpmn".into(),
                        resource: WAITING.as_bytes().to_vec(),
                    },
                ],
                ..Default::default()
            },
        );
        let deployed = handle.execute(deployment).await.expect("deployment");
        assert_eq!(deployed.record_type, RecordType::Event, "{deployed:?}");

        // Phase 1: open everything. Timers are due after an estimate of the opening time.
        let opening_estimate_ms = ((timers + subscriptions) as i64 / 2).max(5_000);
        let fire_start = now_ms() + opening_estimate_ms + 5_000;
        let window_ms = window_s * 1000;
        let started = Instant::now();
        let mut tasks = Vec::new();
        for client in 0..clients {
            let handle = handle.clone();
            tasks.push(tokio::spawn(async move {
                let mut opened = 0u64;
                let mut i = client;
                while i < subscriptions {
                    opened += u64::from(
                        create(&handle, "waiting", format!(r#"{{"key": "key-{i}"}}"#)).await,
                    );
                    i += clients;
                }
                let mut i = client;
                while i < timers {
                    let due = fire_start + (i as i64 * window_ms) / timers.max(1) as i64;
                    opened += u64::from(
                        create(&handle, "timed", format!(r#"{{"due": "{}"}}"#, iso(due))).await,
                    );
                    i += clients;
                }
                opened
            }));
        }
        let mut opened = 0;
        for task in tasks {
            opened += task.await.expect("client");
        }
        while router.in_flight() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        handle.sync().await.expect("sync");
        let elapsed = started.elapsed();
        println!(
            "open: {opened} instances in {:.1} s = {:.0} instances/s ({clients} clients; each opens a timer or a message subscription)",
            elapsed.as_secs_f64(),
            opened as f64 / elapsed.as_secs_f64()
        );
        println!(
            "open: RSS {} MiB, RocksDB cache {:.1} MiB of {:.0} MiB",
            status_kib("VmRSS:") / 1024,
            budget.usage() as f64 / 1048576.0,
            budget.limit() as f64 / 1048576.0
        );
        if now_ms() > fire_start {
            println!(
                "open: WARNING opening took longer than estimated; the first timers fired late while the partition was busy opening"
            );
        }

        // Phase 2: the timers fire while messages are published at a steady rate.
        let mut reader = handle.reader().await.expect("reader");
        let watcher = tokio::spawn(async move {
            let mut delays = Vec::new();
            let mut completed = 0u64;
            while let Ok(Some(record)) = reader.next_waiting().await {
                if record.intent == Intent::from(TimerIntent::Triggered)
                    && let Some(timer) = record.value_as::<TimerRecord>()
                {
                    delays.push(now_ms() - timer.due_date);
                    if delays.len() as u64 == timers && completed >= subscriptions {
                        break;
                    }
                }
                if record.intent == Intent::from(ProcessInstanceIntent::ElementCompleted)
                    && record
                        .value_as::<ProcessInstanceRecord>()
                        .is_some_and(|p| p.bpmn_process_id == "waiting" && p.flow_scope_key < 0)
                {
                    completed += 1;
                    if delays.len() as u64 == timers && completed >= subscriptions {
                        break;
                    }
                }
            }
            (delays, completed)
        });
        let wait = (fire_start - now_ms()).max(0) as u64;
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let publish_started = Instant::now();
        let rate_interval = Duration::from_micros(
            (window_ms as u64 * 1000) / subscriptions.max(1),
        );
        let mut publish_tasks = Vec::new();
        let mut next = Instant::now();
        for i in 0..subscriptions {
            next += rate_interval;
            tokio::time::sleep_until(next.into()).await;
            let handle = handle.clone();
            publish_tasks.push(tokio::spawn(async move {
                let sent = Instant::now();
                let record = Record::command(
                    -1,
                    MessageIntent::Publish,
                    MessageRecord {
                        name: "bench-message".into(),
                        correlation_key: format!("key-{i}"),
                        time_to_live: 60_000,
                        variables: b"{}".to_vec(),
                        tenant_id: "<default>".into(),
                        ..Default::default()
                    },
                );
                handle
                    .execute(record)
                    .await
                    .ok()
                    .map(|_| sent.elapsed().as_millis() as i64)
            }));
        }
        let mut publish_latencies = Vec::new();
        for task in publish_tasks {
            if let Ok(Some(latency)) = task.await {
                publish_latencies.push(latency);
            }
        }
        let published_in = publish_started.elapsed();
        let (delays, completed) =
            tokio::time::timeout(Duration::from_secs(600), watcher)
                .await
                .expect("every timer fires within 10 minutes")
                .expect("watcher");
        println!(
            "fire: {} timers triggered, delay from due date to committed trigger: {}",
            delays.len(),
            percentiles(delays)
        );
        println!(
            "fire: {} messages published meanwhile ({:.0}/s), answered in {}; {completed} waiting instances completed",
            publish_latencies.len(),
            publish_latencies.len() as f64 / published_in.as_secs_f64(),
            percentiles(publish_latencies)
        );
        println!(
            "memory: RSS {} MiB now, peak {} MiB; RocksDB cache {:.1} MiB",
            status_kib("VmRSS:") / 1024,
            status_kib("VmHWM:") / 1024,
            budget.usage() as f64 / 1048576.0
        );
        handle.shutdown().await;
    });
}
