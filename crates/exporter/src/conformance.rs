//! The exporter conformance suite: what every exporter keeps, checked on real partitions (the
//! stream test kit) with the [`Director`] in between. An exporter's crate runs [`run_all`]
//! against its own implementation; each check panics, with what went wrong, on a violation.
//!
//! - **order**: every committed record is delivered, in log order, exactly once in a run
//!   without failures, and what the target holds equals a reference fed each record once;
//! - **restart from the acknowledged position**: a stopped and restarted exporter goes on
//!   with the record after the one it acknowledged;
//! - **at least once after a crash**: a partition and exporter killed mid-stream lose nothing,
//!   and what the target holds afterwards still equals the reference;
//! - **idempotent re-delivery**: the same records delivered again change nothing;
//! - **a store that lost commits** (holds a position below the acknowledged one) is given
//!   again what it lacks, and compaction waits for it ([`rebuilds_what_the_store_lost`], for
//!   targets a test can roll back);
//! - **compaction** waits for the slowest configured exporter and is released when it moves on
//!   or is removed from the configuration.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a conformance suite: a violation fails the test that runs it, by a panic"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use beeline_protocol::Record;
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;
use beeline_stream::{ExporterPosition, NOTHING_ACKNOWLEDGED};

use crate::{Controller, DirectorConfig, ExportError, Exporter, ExporterTask};

/// An exporter under test, with the target it writes to.
pub trait Subject: Send + Sync + 'static {
    type Exporter: Exporter;

    /// A new exporter over this subject's target: the same target every time, as a node that
    /// restarts opens the same store.
    fn exporter(&self) -> Self::Exporter;

    /// What the target holds, as canonical text (no positions, no bookkeeping): two targets
    /// given the same records hold the same text.
    fn contents(&self) -> String;
}

/// How long a check waits for acknowledgements.
const PATIENCE: Duration = Duration::from_secs(30);

/// Runs every check, each with fresh subjects from `new_subject`.
pub fn run_all<S: Subject>(new_subject: impl Fn() -> S) {
    delivers_every_record_in_order(&new_subject);
    restarts_after_the_acknowledged_position(&new_subject);
    loses_nothing_when_killed(&new_subject);
    redelivery_changes_nothing(&new_subject);
    compaction_waits_for_the_slowest_exporter(&new_subject);
}

pub fn delivers_every_record_in_order<S: Subject>(new_subject: &impl Fn() -> S) {
    let subject = new_subject();
    let id = subject.exporter().id().to_owned();
    let harness = harness_with(&[&id]);
    workload(&harness, 0);
    let (task, delivered) = start(&harness, &subject);
    let log = harness.records().list().to_vec();
    wait_for_acknowledged(&task, last_position(&log));
    let delivered = delivered.lock().unwrap().clone();
    let expected: Vec<i64> = log.iter().map(|r| r.position).collect();
    assert_eq!(
        delivered, expected,
        "an exporter gets every committed record once, in log order"
    );
    harness.block_on(task.stop());
    assert_eq!(
        subject.contents(),
        reference(new_subject, &log),
        "the target holds what a reference given each record once holds"
    );
}

pub fn restarts_after_the_acknowledged_position<S: Subject>(new_subject: &impl Fn() -> S) {
    let subject = new_subject();
    let id = subject.exporter().id().to_owned();
    let mut harness = harness_with(&[&id]);
    let mut log = Log::default();
    workload(&harness, 0);
    let (task, _) = start(&harness, &subject);
    wait_for_acknowledged(&task, log.collect(&harness));
    harness.block_on(task.stop());
    // Positions survive in snapshots (a clean stop takes one where snapshots are periodic).
    harness.snapshot(1);
    harness.restart(1);
    let acknowledged = harness
        .partition(1)
        .exporter_positions()
        .get(&id)
        .expect("configured")
        .get();
    assert_eq!(
        acknowledged,
        log.last(),
        "the acknowledged position survives a restart of the partition"
    );
    workload(&harness, 1);
    let (task, delivered) = start(&harness, &subject);
    wait_for_acknowledged(&task, log.collect(&harness));
    harness.block_on(task.stop());
    let log = log.records();
    let delivered = delivered.lock().unwrap().clone();
    let expected: Vec<i64> = log
        .iter()
        .map(|r| r.position)
        .filter(|p| *p > acknowledged)
        .collect();
    assert_eq!(
        delivered, expected,
        "a restarted exporter goes on after its acknowledged position {acknowledged}"
    );
    assert_eq!(subject.contents(), reference(new_subject, &log));
}

/// A target that lost its newest commits after they were acknowledged (SQLite after a power
/// loss, PostgreSQL with fsync off after a crash) holds a position below the partition's
/// acknowledged one. The next open goes on after the target's own position, moves the
/// partition's position back to it (so compaction keeps those records), and the target ends
/// up holding what the reference holds. `save` takes a copy of the target; `restore` puts it
/// back, as the loss would.
pub fn rebuilds_what_the_store_lost<S: Subject, T>(
    new_subject: &impl Fn() -> S,
    save: impl Fn(&S) -> T,
    restore: impl Fn(&S, T),
) {
    let subject = new_subject();
    let id = subject.exporter().id().to_owned();
    let harness = harness_with(&[&id]);
    let mut log = Log::default();
    workload(&harness, 0);
    let (task, _) = start(&harness, &subject);
    let kept = log.collect(&harness);
    wait_for_acknowledged(&task, kept);
    harness.block_on(task.stop());
    let saved = save(&subject);
    workload(&harness, 1);
    let (task, _) = start(&harness, &subject);
    let last = log.collect(&harness);
    wait_for_acknowledged(&task, last);
    harness.block_on(task.stop());
    let position = harness
        .partition(1)
        .exporter_positions()
        .get(&id)
        .expect("configured");
    assert_eq!(position.get(), last);
    restore(&subject, saved);

    let (task, delivered, first) = start_probed(&harness, &subject);
    let started = Instant::now();
    while delivered.lock().unwrap().last().copied() != Some(last) {
        assert!(started.elapsed() < PATIENCE, "not delivered again in time");
        std::thread::sleep(Duration::from_millis(5));
    }
    wait_for_acknowledged(&task, last);
    harness.block_on(task.stop());
    assert_eq!(
        *first.lock().unwrap(),
        Some(kept),
        "when the first record is given again, the partition's position is back at what the \
         target holds, so that compaction keeps what it lacks"
    );
    let delivered = delivered.lock().unwrap().clone();
    assert_eq!(
        delivered.first().copied(),
        Some(kept + 1),
        "the exporter goes on after what the target holds ({kept}), not after what was \
         acknowledged ({last})"
    );
    assert_eq!(
        subject.contents(),
        reference(new_subject, &log.records()),
        "the target holds everything again"
    );
}

pub fn loses_nothing_when_killed<S: Subject>(new_subject: &impl Fn() -> S) {
    let subject = new_subject();
    let id = subject.exporter().id().to_owned();
    let mut harness = harness_with(&[&id]);
    let mut log = Log::default();
    workload(&harness, 0);
    let (task, _) = start(&harness, &subject);
    wait_for_acknowledged(&task, log.collect(&harness));
    // The snapshot keeps this position; what is acknowledged after it is not in it.
    harness.snapshot(1);
    let in_snapshot = task.metrics().position.get();
    workload(&harness, 1);
    log.collect(&harness);
    // Killed mid-stream: the director, then the partition, without flushing or closing.
    std::thread::sleep(Duration::from_millis(20));
    task.abort();
    harness.crash(1);
    let position = harness
        .partition(1)
        .exporter_positions()
        .get(&id)
        .expect("configured")
        .get();
    assert_eq!(
        position, in_snapshot,
        "after a crash the partition's position is the one its snapshot kept"
    );
    workload(&harness, 2);
    let (task, delivered) = start(&harness, &subject);
    wait_for_acknowledged(&task, log.collect(&harness));
    harness.block_on(task.stop());
    let log = log.records();
    let delivered = delivered.lock().unwrap().clone();
    let first = delivered.first().copied().unwrap_or(i64::MAX);
    assert!(
        first <= in_snapshot + 1 || delivered_from_store(&delivered, &log),
        "nothing after the snapshot's position {in_snapshot} is lost (first delivered: {first})"
    );
    assert!(
        delivered.windows(2).all(|w| w[0] < w[1]),
        "in order after a crash"
    );
    assert_eq!(
        subject.contents(),
        reference(new_subject, &log),
        "after a kill, the target holds what a reference given each record once holds"
    );
}

/// Whether `delivered` is the whole tail of `log` after some position: an exporter whose
/// target keeps its own position resumes after that, which may be past the snapshot's.
fn delivered_from_store(delivered: &[i64], log: &[Record]) -> bool {
    let Some(first) = delivered.first() else {
        return false;
    };
    let tail: Vec<i64> = log
        .iter()
        .map(|r| r.position)
        .filter(|p| p >= first)
        .collect();
    tail == delivered
}

pub fn redelivery_changes_nothing<S: Subject>(new_subject: &impl Fn() -> S) {
    let subject = new_subject();
    let harness = harness_with(&[subject.exporter().id()]);
    workload(&harness, 0);
    workload(&harness, 1);
    let log = harness.records().list().to_vec();
    feed(&harness, &subject, &log);
    let once = subject.contents();
    // Everything again, then the second half a third time.
    feed(&harness, &subject, &log);
    feed(&harness, &subject, &log[log.len() / 2..]);
    assert_eq!(
        subject.contents(),
        once,
        "records delivered again change nothing"
    );
}

pub fn compaction_waits_for_the_slowest_exporter<S: Subject>(new_subject: &impl Fn() -> S) {
    let subject = new_subject();
    let id = subject.exporter().id().to_owned();
    let mut harness = harness_with(&[&id, "slow"]);
    workload(&harness, 0);
    let (task, _) = start(&harness, &subject);
    wait_for_acknowledged(&task, last_position(harness.records().list()));
    harness.snapshot(1);
    assert_eq!(
        first_position(&harness),
        1,
        "an exporter that acknowledged nothing holds back compaction"
    );
    // The slow one gets halfway.
    let halfway = last_position(harness.records().list()) / 2;
    harness
        .partition(1)
        .exporter_positions()
        .get("slow")
        .expect("configured")
        .acknowledge(halfway);
    workload(&harness, 1);
    wait_for_acknowledged(&task, last_position(harness.records().list()));
    harness.snapshot(1);
    let first = first_position(&harness);
    assert!(
        first > 1 && first <= halfway + 1,
        "compaction goes as far as the slowest exporter ({halfway}), no further: the log starts at {first}"
    );
    harness.block_on(task.stop());
    // Removed from the configuration, the slow one holds nothing back.
    harness.reconfigure(1, |config| config.exporters = vec![id.clone()]);
    harness.restart(1);
    workload(&harness, 2);
    let (task, _) = start(&harness, &subject);
    wait_for_acknowledged(&task, last_position(harness.records().list()));
    harness.block_on(task.stop());
    harness.snapshot(1);
    assert!(
        first_position(&harness) > halfway + 1,
        "a removed exporter no longer holds back compaction"
    );
}

/// Every record a partition committed, gathered before compaction takes the oldest away.
#[derive(Default)]
struct Log(std::collections::BTreeMap<i64, Record>);

impl Log {
    /// Adds what the log holds now; returns the newest position.
    fn collect(&mut self, harness: &Harness) -> i64 {
        for record in harness.records().list() {
            self.0.insert(record.position, record.clone());
        }
        self.last()
    }

    fn last(&self) -> i64 {
        self.0
            .keys()
            .next_back()
            .copied()
            .unwrap_or(NOTHING_ACKNOWLEDGED)
    }

    fn records(&self) -> Vec<Record> {
        self.0.values().cloned().collect()
    }
}

/// An exporter that notes each position it is given, then hands the record on; and the
/// acknowledged position when the first record came.
pub struct Probe<E> {
    inner: E,
    delivered: Arc<Mutex<Vec<i64>>>,
    controller: Option<Controller>,
    first: Arc<Mutex<Option<i64>>>,
}

impl<E: Exporter> Exporter for Probe<E> {
    fn id(&self) -> &str {
        self.inner.id()
    }

    async fn open(&mut self, controller: Controller) -> Result<Option<i64>, ExportError> {
        self.controller = Some(controller.clone());
        self.inner.open(controller).await
    }

    async fn export(&mut self, record: &Record) -> Result<(), ExportError> {
        if let Some(controller) = &self.controller {
            let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
            first.get_or_insert(controller.acknowledged());
        }
        self.inner.export(record).await?;
        self.delivered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record.position);
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), ExportError> {
        self.inner.flush().await
    }

    async fn close(&mut self) {
        self.inner.close().await;
    }
}

fn harness_with(exporters: &[&str]) -> Harness {
    let exporters: Vec<String> = exporters.iter().map(|s| (*s).to_owned()).collect();
    Harness::with_config(1, |config| config.exporters = exporters.clone())
}

fn start<S: Subject>(harness: &Harness, subject: &S) -> (ExporterTask, Arc<Mutex<Vec<i64>>>) {
    let (task, delivered, _) = start_probed(harness, subject);
    (task, delivered)
}

/// Starts a director over `subject`: the positions it delivers, and the acknowledged position
/// when the first came.
#[allow(clippy::type_complexity, reason = "a test helper's three handles")]
fn start_probed<S: Subject>(
    harness: &Harness,
    subject: &S,
) -> (ExporterTask, Arc<Mutex<Vec<i64>>>, Arc<Mutex<Option<i64>>>) {
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let first = Arc::new(Mutex::new(None));
    let probe = Probe {
        inner: subject.exporter(),
        delivered: delivered.clone(),
        controller: None,
        first: first.clone(),
    };
    let partition = harness.partition(1).clone();
    let config = DirectorConfig {
        flush_interval: Duration::from_millis(10),
        min_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(50),
    };
    let task = harness
        .block_on(async move { crate::Director::spawn(partition, probe, config) })
        .expect("the exporter is configured");
    (task, delivered, first)
}

fn wait_for_acknowledged(task: &ExporterTask, position: i64) {
    let started = Instant::now();
    while task.metrics().position.get() < position {
        assert!(
            started.elapsed() < PATIENCE,
            "the exporter acknowledged {} of {position} within {PATIENCE:?}",
            task.metrics().position.get()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Gives `records` to a new exporter of `subject` directly (no director), then flushes until
/// everything is acknowledged.
fn feed<S: Subject>(harness: &Harness, subject: &S, records: &[Record]) {
    let Some(last) = records.last().map(|r| r.position) else {
        return;
    };
    let position = ExporterPosition::new(NOTHING_ACKNOWLEDGED);
    let controller = Controller::new(1, position.clone());
    let mut exporter = subject.exporter();
    let started = Instant::now();
    // Each call until it succeeds, as the director would.
    macro_rules! retried {
        ($call:expr) => {
            loop {
                match $call.await {
                    Ok(value) => break value,
                    Err(ExportError::Retry(_)) => {
                        assert!(started.elapsed() < PATIENCE, "still failing");
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    Err(ExportError::Fatal(reason)) => panic!("the exporter gave up: {reason}"),
                }
            }
        };
    }
    harness.block_on(async {
        retried!(exporter.open(controller.clone()));
        for record in records {
            retried!(exporter.export(record));
        }
        while position.get() < last {
            assert!(started.elapsed() < PATIENCE, "not acknowledged in time");
            retried!(exporter.flush());
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        exporter.close().await;
    });
}

/// What a fresh subject holds after each record of `log` once.
fn reference<S: Subject>(new_subject: &impl Fn() -> S, log: &[Record]) -> String {
    let subject = new_subject();
    let harness = Harness::new(1);
    feed(&harness, &subject, log);
    subject.contents()
}

fn last_position(log: &[Record]) -> i64 {
    log.last().map_or(NOTHING_ACKNOWLEDGED, |r| r.position)
}

/// The position of the oldest record the partition's log still holds.
fn first_position(harness: &Harness) -> i64 {
    harness
        .records()
        .list()
        .first()
        .map_or(NOTHING_ACKNOWLEDGED, |r| r.position)
}

/// Deploys a one-task process and runs instances through every path a store cares about:
/// created, completed, failed into an incident and resolved, canceled, variables set.
/// `round` keeps the instances of each call apart.
pub fn workload(harness: &Harness, round: u32) {
    if round == 0 {
        harness.deploy_process(
            &ProcessBuilder::new("conformance")
                .start_event("start")
                .service_task("work", "conformance-work")
                .end_event("end"),
        );
    }
    let mut instances = Vec::new();
    for i in 0..6 {
        instances.push(harness.create_instance(
            "conformance",
            &format!(r#"{{"round": {round}, "item": {i}, "note": "r{round}-i{i}"}}"#),
        ));
    }
    let jobs = harness.activate_jobs("conformance-work", 6);
    for (n, (key, _)) in jobs.iter().enumerate() {
        match n {
            0 => {
                harness
                    .fail_job(*key, 0, "no stock", 0)
                    .expect("job fails into an incident");
            }
            1 => {
                harness
                    .cancel_instance(instances[1])
                    .expect("instance canceled");
            }
            2 => {}
            _ => {
                harness
                    .complete_job(*key, &format!(r#"{{"done": {n}}}"#))
                    .expect("job completes");
            }
        }
    }
    harness.settle();
}
