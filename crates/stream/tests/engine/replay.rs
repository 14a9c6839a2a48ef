//! The property that matters most for an event-sourced engine, over BPMN: processing random
//! work, then replaying the log from scratch and from snapshots, gives identical state.

use std::collections::BTreeMap;

use beeline_engine::{Engine, EngineConfig, ReplayProgress};
use beeline_protocol::Record;
use beeline_state::{MemStore, Store};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};
use proptest::prelude::*;

fn models() -> Vec<ProcessBuilder> {
    vec![
        ProcessBuilder::new("linear")
            .start_event("s")
            .service_task_with(
                "a",
                "a",
                r#"<zeebe:ioMapping><zeebe:input source="=n" target="local"/><zeebe:output source="=local + 1" target="n"/></zeebe:ioMapping>"#,
            )
            .service_task("b", "b")
            .end_event("e"),
        ProcessBuilder::new("forks")
            .start_event("s")
            .parallel_gateway("fork")
            .service_task("a", "a")
            .parallel_gateway("join")
            .exclusive_gateway("choose")
            .condition("=n > 2")
            .end_event("big")
            .move_to("choose")
            .default_flow()
            .service_task("b", "b")
            .end_event("small")
            .move_to("fork")
            .sub_process("sub")
            .start_event("in_s")
            .service_task("c", "c")
            .end_event("in_e")
            .end_sub_process()
            .connect_to("join"),
        ProcessBuilder::new("inclusive")
            .start_event("s")
            .inclusive_gateway("fork")
            .condition("=n > 0")
            .service_task("a", "a")
            .inclusive_gateway("join")
            .end_event("e")
            .move_to("fork")
            .condition("=n > 1")
            .service_task("b", "b")
            .connect_to("join")
            .move_to("fork")
            .default_flow()
            .terminate_end_event("stop"),
        ProcessBuilder::new("each")
            .start_event("s")
            .service_task("a", "a")
            .multi_instance(
                "a",
                false,
                r#"inputCollection="=[1, 2, n]" inputElement="item" outputCollection="out" outputElement="=n""#,
                Some("=numberOfCompletedInstances >= 3"),
            )
            .sub_process("seq")
            .start_event("in_s")
            .service_task("c", "c")
            .end_event("in_e")
            .end_sub_process()
            .multi_instance("seq", true, r#"inputCollection="=out" inputElement="o""#, None)
            .end_event("e"),
        ProcessBuilder::new("people")
            .start_event("s")
            .user_task(
                "approve",
                true,
                r#"<zeebe:assignmentDefinition assignee="=owner"/><zeebe:taskListeners><zeebe:taskListener eventType="assigning" type="c"/><zeebe:taskListener eventType="canceling" type="b"/></zeebe:taskListeners>"#,
            )
            .boundary_event("late", "approve", &timer("timeDuration", "PT1M"), true)
            .end_event("late_end")
            .move_to("approve")
            .service_task("b", "b")
            .end_event("e"),
        ProcessBuilder::new("caller")
            .start_event("s")
            .call_activity("call", r#"processId="linear""#, "")
            .end_event("done")
            .boundary_event("late", "call", &timer("timeDuration", "PT1M"), true)
            .end_event("e"),
        ProcessBuilder::new("listened")
            .start_event("s")
            .service_task("t", "b")
            .end_event("e")
            .extension(
                "t",
                r#"<zeebe:executionListeners><zeebe:executionListener eventType="start" type="a"/><zeebe:executionListener eventType="end" type="c"/></zeebe:executionListeners>"#,
            )
            .extension(
                "listened",
                r#"<zeebe:executionListeners><zeebe:executionListener eventType="end" type="a"/></zeebe:executionListeners>"#,
            ),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Create {
        model: usize,
        n: u8,
    },
    Complete {
        job_type: usize,
        n: u8,
    },
    Fail {
        job_type: usize,
        retries: u8,
        backoff: bool,
    },
    Cancel {
        pick: usize,
    },
    CompleteUserTask {
        pick: usize,
        n: u8,
    },
    Advance(i64),
    Snapshot,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..7, 0u8..4).prop_map(|(model, n)| Op::Create { model, n }),
        2 => (0usize..8, 0u8..4).prop_map(|(pick, n)| Op::CompleteUserTask { pick, n }),
        5 => (0usize..3, 0u8..4).prop_map(|(job_type, n)| Op::Complete { job_type, n }),
        2 => (0usize..3, 0u8..2, any::<bool>()).prop_map(|(job_type, retries, backoff)| Op::Fail { job_type, retries, backoff }),
        1 => (0usize..8).prop_map(|pick| Op::Cancel { pick }),
        1 => (1i64..120_000).prop_map(Op::Advance),
        1 => Just(Op::Snapshot),
        1 => Just(Op::Restart),
    ]
}

const JOB_TYPES: [&str; 3] = ["a", "b", "c"];

fn collect(harness: &Harness, into: &mut BTreeMap<i64, Record>) {
    for record in harness.records().list() {
        into.insert(record.position, record.clone());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]

    #[test]
    fn replaying_bpmn_work_gives_the_processed_state(ops in proptest::collection::vec(op(), 1..40)) {
        let mut harness = Harness::new(1);
        for model in models() {
            harness.deploy_process(&model);
        }
        let names = ["linear", "forks", "inclusive", "each", "people", "caller", "listened"];
        let mut instances = Vec::new();
        let mut log = BTreeMap::new();
        collect(&harness, &mut log);
        for op in &ops {
            match op {
                Op::Create { model, n } => {
                    instances.push(harness.create_instance(names[*model], &format!(r#"{{"n": {n}, "owner": "o{n}"}}"#)));
                }
                Op::Complete { job_type, n } => {
                    if let Some((key, _)) = harness.activate_jobs(JOB_TYPES[*job_type], 1).pop() {
                        harness.complete_job(key, &format!(r#"{{"n": {n}}}"#)).unwrap();
                    }
                }
                Op::Fail { job_type, retries, backoff } => {
                    if let Some((key, _)) = harness.activate_jobs(JOB_TYPES[*job_type], 1).pop() {
                        let backoff = if *backoff { 10_000 } else { 0 };
                        harness.fail_job(key, i32::from(*retries), "random", backoff).unwrap();
                    }
                }
                Op::Cancel { pick } => {
                    if !instances.is_empty() {
                        let instance = instances[pick % instances.len()];
                        harness.cancel_instance(instance).unwrap();
                    }
                }
                Op::CompleteUserTask { pick, n } => {
                    let tasks: Vec<i64> = harness
                        .records()
                        .with_intent(beeline_protocol::intent::UserTaskIntent::Created)
                        .list()
                        .iter()
                        .map(|r| r.key)
                        .collect();
                    if !tasks.is_empty() {
                        harness
                            .complete_user_task(tasks[pick % tasks.len()], &format!(r#"{{"n": {n}}}"#))
                            .unwrap();
                    }
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
        let engine = Engine::new(EngineConfig::new(1));
        let fresh = MemStore::new();
        // Opened as a partition opens a new state: marked with its format version.
        beeline_engine::state::format::open(&fresh, std::path::Path::new("replayed"), None).unwrap();
        let mut progress = ReplayProgress { snapshot_position: -1, last_processed_position: -1 };
        let writes = engine.replay(&fresh, records.iter(), &mut progress).unwrap();
        fresh.write(writes).unwrap();
        prop_assert_eq!(fresh.dump(), processed.clone(), "replaying the whole log gives the processed state");
        harness.restart(1);
        prop_assert_eq!(harness.state(1), processed, "replay from the latest snapshot");
    }
}
