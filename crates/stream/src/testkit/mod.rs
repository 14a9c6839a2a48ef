//! An in-process harness: real partitions (stream processor, engine, snapshots) over in-memory
//! journals and stores, a clock the test moves, and assertions on the record stream that print
//! the compact log when they fail.
//!
//! ```ignore
//! let harness = Harness::new(1);
//! let published = harness.publish_message("paid", "order-1", 60_000, "", "{}").unwrap();
//! harness.advance_time(60_000);
//! harness.records().with_intent(MessageIntent::Expired).expect_one();
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "the test kit: a failure in it fails the test that uses it"
)]

pub mod bpmn;
mod client;
pub mod printer;

pub use client::PendingAnswer;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use beeline_log::MemJournal;
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::{MessageRecord, ProcessInstanceRecord};
use beeline_protocol::{Intent, Record, RecordType, RejectionType};
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};

use crate::clock::ControlledClock;
use crate::config::PartitionConfig;
use crate::error::PartitionError;
use crate::handle::PartitionHandle;
use crate::recovery::Partition;
use crate::router::LocalRouter;

/// The time every harness starts at: 2023-11-14T22:13:20Z.
pub const START_TIME: i64 = 1_700_000_000_000;

struct Member {
    journal: MemJournal,
    store: Arc<std::sync::Mutex<Option<Arc<MemStore>>>>,
    snapshot_dir: PathBuf,
    handle: PartitionHandle,
    config: PartitionConfig,
}

pub struct Harness {
    runtime: tokio::runtime::Runtime,
    clock: ControlledClock,
    router: Arc<LocalRouter>,
    members: Vec<Member>,
    _dir: tempfile::TempDir,
}

impl Harness {
    /// A harness with `partitions` partitions, numbered from 1.
    pub fn new(partitions: u16) -> Self {
        Self::with_config(partitions, |_| {})
    }

    pub fn with_config(partitions: u16, configure: impl Fn(&mut PartitionConfig)) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a Tokio runtime for the harness");
        let dir = tempfile::tempdir().expect("a temporary directory for snapshots");
        let clock = ControlledClock::new(START_TIME);
        let mut harness = Self {
            runtime,
            clock,
            router: LocalRouter::new(),
            members: Vec::new(),
            _dir: dir,
        };
        for id in 1..=partitions {
            let mut config = PartitionConfig::new(id);
            config.partition_count = partitions;
            config.snapshot_period = None;
            configure(&mut config);
            let snapshot_dir = harness._dir.path().join(format!("partition-{id}"));
            let journal = MemJournal::new();
            let store = Arc::new(std::sync::Mutex::new(None));
            let handle = harness.open(&config, journal.clone(), &snapshot_dir, &store);
            harness.members.push(Member {
                journal,
                store,
                snapshot_dir,
                handle,
                config,
            });
        }
        harness
    }

    fn open(
        &self,
        config: &PartitionConfig,
        journal: MemJournal,
        snapshot_dir: &PathBuf,
        opened: &Arc<std::sync::Mutex<Option<Arc<MemStore>>>>,
    ) -> PartitionHandle {
        let snapshots = SnapshotStore::open(snapshot_dir, 2).expect("snapshot store");
        let opener =
            |checkpoint: Option<&std::path::Path>| -> beeline_state::Result<Arc<dyn Store>> {
                let store = Arc::new(match checkpoint {
                    Some(dir) => MemStore::open_checkpoint(dir)?,
                    None => MemStore::new(),
                });
                *opened.lock().unwrap_or_else(|e| e.into_inner()) = Some(store.clone());
                Ok(store)
            };
        let _guard = self.runtime.enter();
        let handle = Partition::open(
            config.clone(),
            journal,
            snapshots,
            &opener,
            Arc::new(self.clock.clone()),
            Some(self.router.clone()),
        )
        .expect("partition opens");
        self.router.set_partition(handle.clone());
        handle
    }

    fn member(&self, partition: u16) -> &Member {
        &self.members[usize::from(partition) - 1]
    }

    pub fn partition(&self, partition: u16) -> &PartitionHandle {
        &self.member(partition).handle
    }

    pub fn clock(&self) -> &ControlledClock {
        &self.clock
    }

    /// Runs `future` to its end on the harness's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Writes `command` to partition 1 and waits for its answer.
    pub fn execute(&self, command: Record) -> Result<Record, PartitionError> {
        self.execute_on(1, command)
    }

    pub fn execute_on(&self, partition: u16, command: Record) -> Result<Record, PartitionError> {
        let handle = self.partition(partition).clone();
        self.runtime.block_on(async move {
            tokio::time::timeout(Duration::from_secs(10), handle.execute(command))
                .await
                .unwrap_or_else(|_| {
                    Err(PartitionError::Unavailable {
                        partition,
                        reason: "no answer within 10 s".into(),
                    })
                })
        })
    }

    /// Writes `command` to `partition` without waiting: the answer comes when it comes.
    pub fn submit(&self, partition: u16, command: Record) -> PendingAnswer {
        let answer = self
            .partition(partition)
            .submit(command)
            .expect("the partition takes the command");
        PendingAnswer::new(answer)
    }

    /// Commits what `partition` has written so far (and runs what waited for the commit).
    pub fn sync(&self, partition: u16) {
        let handle = self.partition(partition).clone();
        self.runtime
            .block_on(async move { handle.sync().await })
            .expect("partition syncs");
    }

    /// Commands partitions sent each other and are not answered yet.
    pub fn routed_in_flight(&self) -> usize {
        self.router.in_flight()
    }

    pub fn publish_message(
        &self,
        name: &str,
        correlation_key: &str,
        time_to_live: i64,
        message_id: &str,
        variables: &str,
    ) -> Result<Record, PartitionError> {
        // Subscriptions opened so far are open on the message's partition first (a message
        // without time to live misses a subscription still on its way, in Zeebe as here).
        self.settle();
        // As the gateway does: on the partition of the correlation key.
        let partition = beeline_protocol::partitioning::message_partition(
            correlation_key,
            self.members.len() as u16,
        );
        self.execute_on(
            partition,
            Record::command(
                -1,
                MessageIntent::Publish,
                MessageRecord {
                    name: name.into(),
                    correlation_key: correlation_key.into(),
                    time_to_live,
                    message_id: message_id.into(),
                    variables: variables.as_bytes().to_vec(),
                    tenant_id: "<default>".into(),
                    deadline: -1,
                },
            ),
        )
    }

    /// Correlates a message (not buffered: it reaches what waits now or nothing), on the
    /// partition of its correlation key, as the gateway does; the answer is
    /// `MESSAGE_CORRELATION CORRELATED` or the rejection.
    pub fn correlate_message(
        &self,
        name: &str,
        correlation_key: &str,
        variables: &str,
    ) -> Result<Record, PartitionError> {
        self.settle();
        let partition = beeline_protocol::partitioning::message_partition(
            correlation_key,
            self.members.len() as u16,
        );
        let answer = self.submit(
            partition,
            Record::command(
                -1,
                beeline_protocol::intent::MessageCorrelationIntent::Correlate,
                beeline_protocol::value::MessageCorrelationRecord {
                    name: name.into(),
                    correlation_key: correlation_key.into(),
                    variables: variables.as_bytes().to_vec(),
                    tenant_id: "<default>".into(),
                    message_key: -1,
                    process_instance_key: -1,
                    process_definition_key: -1,
                },
            ),
        );
        // The instance that takes the message may be on another partition: its answer comes
        // back once the exchange between the partitions is done.
        self.settle();
        answer.wait(self)
    }

    /// Pins the partitions' clock at `time` (`Some`, ms since the epoch) or resets it to the
    /// harness's clock (`None`), from `partition`, which distributes it.
    pub fn change_clock_on(
        &self,
        partition: u16,
        time: Option<i64>,
    ) -> Result<Record, PartitionError> {
        use beeline_protocol::intent::ClockIntent;
        let intent = if time.is_some() {
            ClockIntent::Pin
        } else {
            ClockIntent::Reset
        };
        let answer = self.execute_on(
            partition,
            Record::command(
                -1,
                intent,
                beeline_protocol::value::ClockRecord {
                    time: time.unwrap_or(0),
                },
            ),
        );
        self.settle();
        answer
    }

    /// Broadcasts a signal from `partition` (the gateway picks any).
    pub fn broadcast_signal_on(
        &self,
        partition: u16,
        name: &str,
        variables: &str,
    ) -> Result<Record, PartitionError> {
        self.settle();
        self.execute_on(
            partition,
            Record::command(
                -1,
                beeline_protocol::intent::SignalIntent::Broadcast,
                beeline_protocol::value::SignalRecord {
                    signal_name: name.into(),
                    variables: variables.as_bytes().to_vec(),
                    tenant_id: "<default>".into(),
                },
            ),
        )
    }

    pub fn broadcast_signal(&self, name: &str, variables: &str) -> Result<Record, PartitionError> {
        self.broadcast_signal_on(1, name, variables)
    }

    /// Moves the clock and runs every partition's scheduler.
    pub fn advance_time(&self, ms: i64) {
        self.clock.advance(ms);
        for member in &self.members {
            let handle = member.handle.clone();
            self.runtime
                .block_on(async move {
                    handle.run_scheduler().await?;
                    handle.sync().await
                })
                .expect("scheduler runs");
        }
        self.settle();
    }

    pub fn snapshot(&self, partition: u16) -> Option<i64> {
        let handle = self.partition(partition).clone();
        self.runtime
            .block_on(async move { handle.snapshot().await })
            .expect("snapshot")
    }

    /// The position of the partition's latest snapshot, without taking one.
    pub fn latest_snapshot(&self, partition: u16) -> Option<i64> {
        SnapshotStore::look(&self.member(partition).snapshot_dir)
            .latest()
            .expect("snapshot store")
            .map(|snapshot| snapshot.position)
    }

    /// The partition's snapshot directory.
    pub fn snapshot_dir(&self, partition: u16) -> &std::path::Path {
        &self.member(partition).snapshot_dir
    }

    /// Stops the partition and opens it again from its log and latest snapshot: the in-memory
    /// state is lost, as RocksDB's is on a crash (it runs without its own WAL).
    pub fn restart(&mut self, partition: u16) {
        let handle = self.partition(partition).clone();
        self.runtime
            .block_on(async move { handle.shutdown().await });
        self.reopen(partition);
    }

    /// Changes the partition's configuration; it takes effect when the partition is opened
    /// again ([`restart`](Self::restart), [`crash`](Self::crash)).
    pub fn reconfigure(&mut self, partition: u16, change: impl FnOnce(&mut PartitionConfig)) {
        change(&mut self.members[usize::from(partition) - 1].config);
    }

    /// Stops the partition as a crash would (without the snapshot a clean stop takes) and
    /// opens it again from its log and the latest snapshot taken before.
    pub fn crash(&mut self, partition: u16) {
        let handle = self.partition(partition).clone();
        self.runtime.block_on(async move { handle.halt().await });
        self.reopen(partition);
    }

    /// [`crash`](Self::crash), with `edit` given the partition's snapshot directory while the
    /// partition is down (to build a data directory as an older build left it).
    pub fn crash_and_edit(&mut self, partition: u16, edit: impl FnOnce(&std::path::Path)) {
        let handle = self.partition(partition).clone();
        self.runtime.block_on(async move { handle.halt().await });
        edit(&self.member(partition).snapshot_dir);
        self.reopen(partition);
    }

    fn reopen(&mut self, partition: u16) {
        let index = usize::from(partition) - 1;
        let member = &self.members[index];
        let handle = self.open(
            &member.config,
            member.journal.clone(),
            &member.snapshot_dir,
            &member.store,
        );
        self.members[index].handle = handle;
    }

    /// Every committed record of partition 1 so far.
    pub fn records(&self) -> Records {
        self.records_of(1)
    }

    /// Loses every command other partitions send to `partition` until it is connected again.
    pub fn cut_off(&self, partition: u16, cut: bool) {
        self.router.cut_off(partition, cut);
    }

    /// Waits until no partition has work left from what happened so far: every command routed
    /// between partitions is processed, and everything written is committed.
    pub fn settle(&self) {
        // A partition answers a routed command once its batch is committed, after sending
        // what the batch sends: no commands on their way right after every partition committed
        // everything means nothing more is coming.
        for attempt in 0..10_000 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            for member in &self.members {
                let handle = member.handle.clone();
                self.runtime
                    .block_on(async move { handle.sync().await })
                    .expect("partition syncs");
            }
            if self.router.in_flight() == 0 {
                return;
            }
        }
        panic!("the partitions keep sending each other commands");
    }

    pub fn records_of(&self, partition: u16) -> Records {
        self.settle();
        let handle = self.partition(partition).clone();
        let records = self.runtime.block_on(async move {
            handle.sync().await.expect("partition syncs");
            let mut reader = handle.reader().await.expect("reader");
            let mut records = Vec::new();
            while let Some(record) = reader.next_record().expect("readable log") {
                records.push(record);
            }
            records
        });
        Records {
            all: records.clone(),
            selected: records,
        }
    }

    /// Every entry of the partition's state, in key order (once the partition has committed
    /// what it wrote).
    pub fn state(&self, partition: u16) -> Vec<(Vec<u8>, Vec<u8>)> {
        let handle = self.partition(partition).clone();
        self.runtime
            .block_on(async move { handle.sync().await })
            .ok();
        let store = self
            .member(partition)
            .store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        store.map(|s| s.dump()).unwrap_or_default()
    }

    /// The partition's journal, for tests that inspect or damage it.
    pub fn journal(&self, partition: u16) -> &MemJournal {
        &self.member(partition).journal
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        for member in &self.members {
            let handle = member.handle.clone();
            self.runtime
                .block_on(async move { handle.shutdown().await });
        }
    }
}

/// A record as [`Records::steps`] names it.
fn step(record: &Record) -> String {
    let mut step = format!("{} {}", record.value_type().name(), record.intent.name());
    if record.record_type == RecordType::CommandRejection {
        step.insert_str(0, "REJECTED ");
    }
    if let Some(element) = record.value_as::<ProcessInstanceRecord>() {
        step.push_str(&format!(
            " {} {}",
            element.bpmn_element_type, element.element_id
        ));
    } else if let Some(variable) = record.value_as::<beeline_protocol::value::VariableRecord>() {
        step.push_str(&format!(" {}", variable.name));
    }
    step
}

/// A selection of records, with assertions that print the whole log when they fail.
#[derive(Clone)]
pub struct Records {
    all: Vec<Record>,
    selected: Vec<Record>,
}

impl Records {
    fn filter(mut self, keep: impl Fn(&Record) -> bool) -> Self {
        self.selected.retain(|r| keep(r));
        self
    }

    pub fn with_intent(self, intent: impl Into<Intent>) -> Self {
        let intent = intent.into();
        self.filter(|r| r.intent == intent)
    }

    pub fn with_type(self, record_type: RecordType) -> Self {
        self.filter(|r| r.record_type == record_type)
    }

    pub fn events(self) -> Self {
        self.with_type(RecordType::Event)
    }

    pub fn rejections(self) -> Self {
        self.with_type(RecordType::CommandRejection)
    }

    pub fn with_key(self, key: i64) -> Self {
        self.filter(|r| r.key == key)
    }

    pub fn with_rejection(self, rejection: RejectionType) -> Self {
        self.filter(|r| r.rejection_type == rejection)
    }

    pub fn matching(self, keep: impl Fn(&Record) -> bool) -> Self {
        self.filter(keep)
    }

    pub fn with_value_type(self, value_type: beeline_protocol::ValueType) -> Self {
        self.filter(|r| r.value_type() == value_type)
    }

    /// Process instance records of one element.
    pub fn with_element(self, element_id: &str) -> Self {
        self.filter(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.element_id == element_id)
        })
    }

    /// Records of one process instance (by their value's instance key).
    pub fn of_instance(self, instance: i64) -> Self {
        self.filter(|r| r.value.process_instance_key() == Some(instance))
    }

    /// The element lifecycle of process instances: (element id, intent) of each
    /// PROCESS_INSTANCE event, in order.
    pub fn lifecycle(&self) -> Vec<(String, Intent)> {
        self.selected
            .iter()
            .filter(|r| r.is_event())
            .filter_map(|r| {
                r.value_as::<ProcessInstanceRecord>()
                    .map(|v| (v.element_id.clone(), r.intent))
            })
            .collect()
    }

    /// The selected records as Zeebe's tests name them: value type and intent, then for an
    /// element instance its element type and id, for a variable its name (`"PROCESS_INSTANCE
    /// ELEMENT_ACTIVATED SERVICE_TASK task"`, `"VARIABLE CREATED loopCounter"`); a rejection
    /// starts with `REJECTED`.
    pub fn steps(&self) -> Vec<String> {
        self.selected.iter().map(step).collect()
    }

    /// The selected records hold these steps (see [`steps`](Self::steps)) in this order, with
    /// others between them or not: Zeebe's tests assert a record stream this way.
    pub fn expect_subsequence(&self, expected: &[&str]) {
        let steps = self.steps();
        let mut next = 0;
        for step in &steps {
            if next < expected.len() && step == expected[next] {
                next += 1;
            }
        }
        if next < expected.len() {
            self.fail(&format!(
                "expected the steps {expected:#?} in this order, but found none for {:?} after {:?}; the steps were:\n{}",
                expected[next],
                next.checked_sub(1).map(|i| expected[i]),
                steps.join("\n")
            ));
        }
    }

    /// The selected records' intents, in order.
    pub fn intents(&self) -> Vec<Intent> {
        self.selected.iter().map(|r| r.intent).collect()
    }

    /// The selected records' values as `V`.
    pub fn values<V: beeline_protocol::Value>(&self) -> Vec<V> {
        self.selected
            .iter()
            .filter_map(|r| r.value_as::<V>().cloned())
            .collect()
    }

    /// Panics with the log unless `check` holds.
    pub fn expect(&self, check: bool, what: &str) {
        if !check {
            self.fail(what);
        }
    }

    pub fn list(&self) -> &[Record] {
        &self.selected
    }

    pub fn len(&self) -> usize {
        self.selected.len()
    }

    pub fn is_empty(&self) -> bool {
        self.selected.is_empty()
    }

    /// The whole log in compact form.
    pub fn log(&self) -> String {
        printer::compact_log(&self.all)
    }

    fn fail(&self, what: &str) -> ! {
        panic!("{what}\n--- log ---\n{}\n-----------", self.log())
    }

    /// Exactly one record is selected; returns it.
    pub fn expect_one(&self) -> Record {
        match self.selected.as_slice() {
            [one] => one.clone(),
            other => self.fail(&format!(
                "expected one matching record, found {}",
                other.len()
            )),
        }
    }

    pub fn expect_count(&self, count: usize) -> Vec<Record> {
        if self.selected.len() != count {
            self.fail(&format!(
                "expected {count} matching records, found {}",
                self.selected.len()
            ));
        }
        self.selected.clone()
    }

    pub fn expect_none(&self) {
        if !self.selected.is_empty() {
            self.fail(&format!(
                "expected no matching record, found {}:\n{}",
                self.selected.len(),
                printer::compact_log(&self.selected)
            ));
        }
    }

    /// The selected records have exactly these intents, in this order.
    pub fn expect_intents(&self, intents: &[Intent]) {
        let actual: Vec<Intent> = self.selected.iter().map(|r| r.intent).collect();
        if actual != intents {
            self.fail(&format!("expected intents {intents:?}, found {actual:?}"));
        }
    }
}
