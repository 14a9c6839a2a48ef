//! The partition end to end through the test kit: answers after commit, the scheduler,
//! restarts with and without snapshots, and the property that replay equals processing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;

use beeline_engine::{Engine, EngineConfig, ReplayProgress};
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_protocol::{Record, RecordType, RejectionType};
use beeline_state::{MemStore, Store};
use beeline_stream::testkit::{Harness, START_TIME, printer};
use proptest::prelude::*;

#[test]
fn a_published_message_is_answered_with_its_event() {
    let harness = Harness::new(1);
    let answer = harness
        .publish_message("paid", "order-1", 60_000, "", r#"{"amount":10}"#)
        .unwrap();
    assert_eq!(answer.intent, MessageIntent::Published.into());
    assert_eq!(answer.record_type, RecordType::Event);
    assert_eq!(answer.key, beeline_protocol::key::encode(1, 1));
    let message = answer.value_as::<MessageRecord>().unwrap();
    assert_eq!(message.deadline, START_TIME + 60_000);
    let records = harness.records();
    records.clone().expect_count(2);
    let command = records
        .clone()
        .with_intent(MessageIntent::Publish)
        .expect_one();
    let event = records.with_intent(MessageIntent::Published).expect_one();
    assert_eq!(command.position, 1);
    assert_eq!(event.position, 2);
    assert_eq!(event.source_record_position, command.position);
    assert_eq!(event.timestamp, START_TIME);
    assert_eq!(event, answer);
    // The answer waited for a sync, and the sync's duration was counted.
    let metrics = harness.partition(1).metrics();
    let synced = metrics.flush_latency.snapshot().count;
    assert!(
        synced >= 1 && synced <= beeline_stream::PartitionMetrics::get(&metrics.flushes),
        "{synced} syncs timed"
    );
}

#[test]
fn the_scheduler_expires_messages_when_their_time_is_up() {
    let harness = Harness::new(1);
    let published = harness
        .publish_message("paid", "order-1", 10_000, "m1", "{}")
        .unwrap();
    harness.advance_time(9_999);
    harness
        .records()
        .with_intent(MessageIntent::Expired)
        .expect_none();
    harness.advance_time(1);
    let records = harness.records();
    let expire = records
        .clone()
        .with_intent(MessageIntent::Expire)
        .expect_one();
    assert_eq!(expire.key, published.key);
    assert_eq!(
        expire.source_record_position, -1,
        "a scheduled command comes from outside"
    );
    let expired = records.with_intent(MessageIntent::Expired).expect_one();
    assert_eq!(expired.source_record_position, expire.position);
    // The id is free again.
    let again = harness
        .publish_message("paid", "order-1", 10_000, "m1", "{}")
        .unwrap();
    assert_eq!(again.record_type, RecordType::Event);
}

#[test]
fn rejections_are_answered_and_logged() {
    let harness = Harness::new(1);
    harness
        .publish_message("paid", "o", 60_000, "dup", "{}")
        .unwrap();
    let rejection = harness
        .publish_message("paid", "o", 60_000, "dup", "{}")
        .unwrap();
    assert_eq!(rejection.record_type, RecordType::CommandRejection);
    assert_eq!(rejection.rejection_type, RejectionType::AlreadyExists);
    harness
        .records()
        .rejections()
        .with_rejection(RejectionType::AlreadyExists)
        .expect_one();
}

#[test]
fn a_restart_without_snapshot_rebuilds_state_from_the_log() {
    let mut harness = Harness::new(1);
    harness
        .publish_message("paid", "o", 60_000, "m1", "{}")
        .unwrap();
    let state_before = harness.state(1);
    harness.restart(1);
    assert_eq!(
        harness.state(1),
        state_before,
        "replay rebuilt the same state"
    );
    let duplicate = harness
        .publish_message("paid", "o", 60_000, "m1", "{}")
        .unwrap();
    assert_eq!(duplicate.rejection_type, RejectionType::AlreadyExists);
    let other = harness
        .publish_message("paid", "o", 60_000, "m2", "{}")
        .unwrap();
    assert_eq!(
        other.key,
        beeline_protocol::key::encode(1, 2),
        "the key generator continues after the keys in the log"
    );
    assert_eq!(other.position, 6, "positions continue after the log");
}

#[test]
fn a_restart_from_a_snapshot_replays_only_what_came_after_it() {
    let mut harness = Harness::new(1);
    for i in 0..5 {
        harness
            .publish_message("paid", &format!("o{i}"), 60_000, &format!("m{i}"), "{}")
            .unwrap();
    }
    let position = harness.snapshot(1).expect("a snapshot position");
    assert_eq!(position, 9, "the last processed command");
    harness
        .publish_message("paid", "late", 60_000, "late", "{}")
        .unwrap();
    let state_before = harness.state(1);
    harness.restart(1);
    assert_eq!(harness.state(1), state_before);
    let records = harness.records();
    assert!(
        records.list().first().map(|r| r.position).unwrap_or(0) <= position + 1,
        "the log still reaches back to the snapshot"
    );
    harness.advance_time(60_000);
    harness
        .records()
        .with_intent(MessageIntent::Expired)
        .expect_count(6);
}

#[test]
fn a_clean_stop_leaves_a_snapshot_of_everything_processed() {
    // Snapshots are periodic; a stop between two periods would otherwise leave the whole log
    // since the last one to replay at the next start.
    let mut harness = Harness::with_config(1, |c| {
        c.snapshot_period = Some(std::time::Duration::from_secs(3600));
    });
    for i in 0..3 {
        harness
            .publish_message("paid", &format!("o{i}"), 60_000, &format!("m{i}"), "{}")
            .unwrap();
    }
    assert_eq!(harness.latest_snapshot(1), None);
    let state_before = harness.state(1);
    harness.restart(1);
    assert_eq!(
        harness.latest_snapshot(1),
        Some(5),
        "the last processed command"
    );
    assert_eq!(harness.state(1), state_before);
    // Nothing new processed: the next clean stop takes no second snapshot.
    harness.restart(1);
    assert_eq!(harness.latest_snapshot(1), Some(5));
    // With periodic snapshots off, a stop takes none either.
    let mut harness = Harness::new(1);
    harness
        .publish_message("paid", "o", 60_000, "m", "{}")
        .unwrap();
    harness.restart(1);
    assert_eq!(harness.latest_snapshot(1), None);
}

#[test]
fn a_snapshot_is_taken_once_the_log_since_the_last_one_reaches_its_size() {
    use beeline_log::Journal;
    // No period: only the log's size takes snapshots, each compacting the log below it.
    let harness = Harness::with_config(1, |c| {
        c.snapshot_period = None;
        c.snapshot_log_size = Some(512);
    });
    let mut last_snapshot = None;
    let mut snapshots_seen = 0;
    for i in 0..60 {
        harness
            .publish_message("paid", &format!("o{i}"), 60_000, &format!("m{i}"), "{}")
            .unwrap();
        let latest = harness.latest_snapshot(1);
        if latest != last_snapshot {
            snapshots_seen += 1;
            last_snapshot = latest;
        }
    }
    let taken = beeline_stream::PartitionMetrics::get(&harness.partition(1).metrics().snapshots);
    let journal = harness.journal(1);
    assert!(
        taken >= 5 && snapshots_seen >= 5,
        "snapshots by size: {taken} taken, {snapshots_seen} seen"
    );
    assert!(
        journal.first_index() > journal.last_index() / 2,
        "the log is compacted below the snapshots: entries {} to {}",
        journal.first_index(),
        journal.last_index()
    );
    // Off, the log grows until the period (none here) or a request.
    let harness = Harness::with_config(1, |c| {
        c.snapshot_period = None;
        c.snapshot_log_size = None;
    });
    for i in 0..60 {
        harness
            .publish_message("paid", &format!("o{i}"), 60_000, &format!("m{i}"), "{}")
            .unwrap();
    }
    assert_eq!(harness.latest_snapshot(1), None);
    assert_eq!(harness.journal(1).first_index(), 1, "nothing compacted");
}

#[test]
fn follow_up_work_after_a_restart_is_not_lost() {
    // Messages published before a restart expire after it: the deadline index is state that
    // replay must rebuild.
    let mut harness = Harness::new(1);
    harness
        .publish_message("paid", "a", 5_000, "", "{}")
        .unwrap();
    harness.snapshot(1);
    harness
        .publish_message("paid", "b", 5_000, "", "{}")
        .unwrap();
    harness.restart(1);
    harness.advance_time(5_000);
    harness
        .records()
        .with_intent(MessageIntent::Expired)
        .expect_count(2);
}

#[test]
fn several_partitions_run_independently() {
    let harness = Harness::new(3);
    for partition in 1..=3 {
        let answer = harness
            .execute_on(
                partition,
                Record::command(
                    -1,
                    MessageIntent::Publish,
                    MessageRecord {
                        name: "n".into(),
                        time_to_live: 1000,
                        ..Default::default()
                    },
                ),
            )
            .unwrap();
        assert_eq!(
            beeline_protocol::key::partition_of(answer.key),
            Some(partition)
        );
        assert_eq!(answer.partition_id, partition);
    }
}

// ---- replay equals processing ---------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Publish {
        name: u8,
        key: u8,
        ttl: i64,
        id: Option<u8>,
    },
    Advance(i64),
    Snapshot,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..3, 0u8..3, prop_oneof![Just(0i64), Just(1_000), Just(30_000)], proptest::option::of(0u8..3))
            .prop_map(|(name, key, ttl, id)| Op::Publish { name, key, ttl, id }),
        2 => (1i64..40_000).prop_map(Op::Advance),
        1 => Just(Op::Snapshot),
        1 => Just(Op::Restart),
    ]
}

/// Collects every committed record by position (snapshots compact the log, so read as we go).
fn collect(harness: &Harness, into: &mut BTreeMap<i64, Record>) {
    for record in harness.records().list() {
        into.insert(record.position, record.clone());
    }
}

fn replay_from_scratch(records: &[Record]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let engine = Engine::new(EngineConfig::new(1));
    let store = MemStore::new();
    // Opened as a partition opens a new state: marked with its format version.
    beeline_engine::state::format::open(&store, std::path::Path::new("replayed"), None).unwrap();
    let mut progress = ReplayProgress {
        snapshot_position: -1,
        last_processed_position: -1,
    };
    let writes = engine
        .replay(&store, records.iter(), &mut progress)
        .unwrap();
    store.write(writes).unwrap();
    store.dump()
}

/// Runs every command that came from outside the engine again, in order, on a fresh engine:
/// the results must be the ones in the log.
fn reprocess(records: &[Record]) -> Result<(), String> {
    let engine = Engine::new(EngineConfig::new(1));
    let store = MemStore::new();
    for command in records.iter().filter(|r| r.is_command() && !r.processed) {
        let result = engine.process(&store, command).map_err(|e| e.to_string())?;
        store.write(result.writes).map_err(|e| e.to_string())?;
        let logged: Vec<&Record> = records
            .iter()
            .filter(|r| r.source_record_position == command.position)
            .collect();
        if logged.len() != result.records.len() {
            return Err(format!(
                "command #{} produced a different number of records",
                command.position
            ));
        }
        for (logged, produced) in logged.into_iter().zip(result.records) {
            let mut produced = produced;
            produced.position = logged.position;
            if *logged != produced {
                return Err(format!(
                    "reprocessing differs:\n  log: {}\n  now: {}",
                    printer::compact(logged),
                    printer::compact(&produced)
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn replay_from_scratch_and_from_snapshots_equals_processing(ops in proptest::collection::vec(op(), 1..40)) {
        let mut harness = Harness::new(1);
        let mut log = BTreeMap::new();
        for op in &ops {
            match op {
                Op::Publish { name, key, ttl, id } => {
                    let id = id.map(|i| format!("id-{i}")).unwrap_or_default();
                    harness
                        .publish_message(&format!("msg-{name}"), &format!("key-{key}"), *ttl, &id, "{}")
                        .unwrap();
                }
                Op::Advance(ms) => harness.advance_time(*ms),
                Op::Snapshot => {
                    harness.snapshot(1);
                }
                Op::Restart => {
                    let before = harness.state(1);
                    harness.restart(1);
                    prop_assert_eq!(harness.state(1), before, "restart from snapshot + replay");
                }
            }
            collect(&harness, &mut log);
        }
        let processed = harness.state(1);
        let records: Vec<Record> = log.into_values().collect();
        prop_assert_eq!(
            replay_from_scratch(&records),
            processed.clone(),
            "replaying the whole log gives the processed state\n{}",
            printer::compact_log(&records)
        );
        if let Err(difference) = reprocess(&records) {
            prop_assert!(false, "{}\n{}", difference, printer::compact_log(&records));
        }
        harness.restart(1);
        prop_assert_eq!(harness.state(1), processed, "replay from the latest snapshot");
    }
}

#[test]
fn a_command_larger_than_a_log_entry_is_refused_and_the_partition_goes_on() {
    let harness = Harness::with_config(1, |config| config.max_batch_bytes = 4096);
    let variables = |size: usize| format!(r#"{{"v":"{}"}}"#, "x".repeat(size));
    let error = harness
        .publish_message("big", "k", 1000, "", &variables(10_000))
        .unwrap_err();
    assert!(
        matches!(
            error,
            beeline_stream::PartitionError::CommandTooLarge { max: 4096, .. }
        ),
        "{error:?}"
    );
    // Fits as a command, but its two events (published and, with no time to live, expired)
    // do not fit one entry: the command is rejected instead.
    let rejection = harness
        .publish_message("big", "k", 0, "", &variables(2_500))
        .unwrap();
    assert_eq!(
        rejection.rejection_type,
        RejectionType::ExceededBatchRecordSize
    );
    let ok = harness
        .publish_message("small", "k", 1000, "", "{}")
        .unwrap();
    assert_eq!(ok.record_type, RecordType::Event);
}

#[test]
fn commands_a_crash_left_without_results_are_processed_on_recovery() {
    use beeline_log::{Journal, MemJournal};
    use beeline_protocol::codec::encode_batch;
    use beeline_state::snapshot::SnapshotStore;
    use beeline_stream::{ControlledClock, Partition, PartitionConfig};
    use std::sync::Arc;

    // The log as a crash right after writing two commands leaves it: no results yet.
    let mut journal = MemJournal::new();
    let commands: Vec<Record> = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let mut command = Record::command(
                -1,
                MessageIntent::Publish,
                MessageRecord {
                    name: "left".into(),
                    correlation_key: key.to_string(),
                    time_to_live: 60_000,
                    ..Default::default()
                },
            );
            command.position = i as i64 + 1;
            command.timestamp = START_TIME;
            command.partition_id = 1;
            command
        })
        .collect();
    let mut bytes = Vec::new();
    encode_batch(commands.iter(), &mut bytes);
    journal.append(1, &bytes).unwrap();
    journal.commit_index().advance(1);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let opener = |_: Option<&std::path::Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(MemStore::new()))
    };
    let handle = {
        let _guard = runtime.enter();
        Partition::open(
            PartitionConfig::new(1),
            journal.clone(),
            SnapshotStore::open(dir.path(), 2).unwrap(),
            &opener,
            Arc::new(ControlledClock::new(START_TIME)),
            None,
        )
        .unwrap()
    };
    let records = runtime.block_on(async {
        handle.sync().await.unwrap();
        let mut reader = handle.reader().await.unwrap();
        let mut records = Vec::new();
        while let Some(record) = reader.next_record().unwrap() {
            records.push(record);
        }
        handle.shutdown().await;
        records
    });
    let published: Vec<&Record> = records
        .iter()
        .filter(|r| r.intent == MessageIntent::Published.into())
        .collect();
    assert_eq!(published.len(), 2, "{}", printer::compact_log(&records));
    assert_eq!(published[0].source_record_position, 1);
    assert_eq!(published[1].source_record_position, 2);
    assert_eq!(
        records.len(),
        4,
        "each command processed once: {}",
        printer::compact_log(&records)
    );
}

/// What a routed command causes is on its way before its sender hears back: a partition answers
/// only once the batch is committed, and sends the batch's commands first. (Answering at once
/// let the count of routed commands drop to zero while a confirmation was still to be sent,
/// and tests waiting for quiet read the log too early.)
#[test]
fn a_routed_command_is_answered_after_its_commit_and_after_what_it_sends() {
    use beeline_protocol::intent::MessageSubscriptionIntent;
    use beeline_protocol::value::MessageSubscriptionRecord;
    use beeline_stream::FlushPolicy;
    use std::time::Duration;

    // Commits only when the test syncs.
    let harness = Harness::with_config(1, |config| {
        config.flush = FlushPolicy::Delayed(Duration::from_secs(3600));
    });
    let open = Record::command(
        -1,
        MessageSubscriptionIntent::Create,
        MessageSubscriptionRecord {
            process_instance_key: beeline_protocol::key::encode(1, 100),
            element_instance_key: beeline_protocol::key::encode(1, 101),
            bpmn_process_id: "order".into(),
            message_name: "paid".into(),
            correlation_key: "o-1".into(),
            ..Default::default()
        },
    );
    let mut answer = harness.submit(1, open);
    // Processed at once, committed never: the sender hears nothing.
    std::thread::sleep(Duration::from_millis(200));
    assert!(answer.try_take().is_none(), "answered before its commit");
    assert_eq!(harness.routed_in_flight(), 0);

    harness.sync(1);
    let answered = answer.wait(&harness);
    assert!(answered.is_err(), "a subscription's opening has no answer");
    assert_eq!(
        harness.routed_in_flight(),
        1,
        "the confirmation was sent before the answer"
    );
    harness
        .records()
        .with_intent(beeline_protocol::intent::ProcessMessageSubscriptionIntent::Create)
        .with_type(RecordType::Command)
        .expect_one();
}
