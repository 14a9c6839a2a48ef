//! Signals: broadcast to every partition, caught by catch events, boundary events and event
//! sub-processes, starting instances at signal start events, thrown by throw and end events.

use beeline_protocol::RecordType;
use beeline_protocol::intent::{
    ProcessInstanceIntent as PI, SignalIntent, SignalSubscriptionIntent,
};
use beeline_protocol::value::{SignalRecord, VariableRecord};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, signal_ref};

fn completed(harness: &Harness, partition: u16, instance: i64, process: &str) -> bool {
    !harness
        .records_of(partition)
        .of_instance(instance)
        .with_element(process)
        .with_intent(PI::ElementCompleted)
        .is_empty()
}

#[test]
fn a_signal_completes_the_catch_events_waiting_for_it() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .signal("go")
            .start_event("s")
            .catch_event("wait", &signal_ref("go"))
            .end_event("e"),
    );
    let first = harness.create_instance("p", "{}");
    let second = harness.create_instance("p", "{}");
    harness
        .records()
        .with_intent(SignalSubscriptionIntent::Created)
        .expect_count(2);
    let broadcast = harness.broadcast_signal("other", "{}").unwrap();
    assert_eq!(broadcast.record_type, RecordType::Event);
    assert!(!completed(&harness, 1, first, "p"));
    let broadcast = harness
        .broadcast_signal("go", r#"{"why": "ready"}"#)
        .unwrap();
    assert_eq!(
        broadcast.intent,
        beeline_protocol::Intent::from(SignalIntent::Broadcasted)
    );
    assert_eq!(
        broadcast.value_as::<SignalRecord>().unwrap().signal_name,
        "go"
    );
    assert!(completed(&harness, 1, first, "p"));
    assert!(completed(&harness, 1, second, "p"));
    harness
        .records()
        .with_intent(SignalSubscriptionIntent::Deleted)
        .expect_count(2);
    let why = harness
        .records()
        .values::<VariableRecord>()
        .into_iter()
        .filter(|v| v.name == "why")
        .count();
    assert_eq!(why, 2);
}

#[test]
fn canceling_an_instance_closes_its_signal_subscriptions() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .signal("go")
            .start_event("s")
            .catch_event("wait", &signal_ref("go"))
            .end_event("e"),
    );
    let instance = harness.create_instance("p", "{}");
    harness.cancel_instance(instance).unwrap();
    harness
        .records()
        .with_intent(SignalSubscriptionIntent::Deleted)
        .expect_one();
    harness.broadcast_signal("go", "{}").unwrap();
    harness.records().with_element("e").expect_none();
}

#[test]
fn a_signal_start_event_starts_an_instance_once_per_broadcast() {
    let harness = Harness::new(3);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .signal("start")
            .start_event_with("s", &signal_ref("start"))
            .end_event("e"),
    );
    harness.settle();
    for partition in 1..=3 {
        harness
            .records_of(partition)
            .with_intent(SignalSubscriptionIntent::Created)
            .expect_one();
    }
    harness
        .broadcast_signal_on(2, "start", r#"{"x": 1}"#)
        .unwrap();
    let started: usize = (1..=3)
        .map(|p| {
            harness
                .records_of(p)
                .with_element("p")
                .with_intent(PI::ElementCompleted)
                .len()
        })
        .sum();
    assert_eq!(
        started, 1,
        "one instance, on the partition that took the broadcast"
    );
    harness
        .records_of(2)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    // The broadcast reached every partition.
    for partition in 1..=3 {
        harness
            .records_of(partition)
            .with_intent(SignalIntent::Broadcasted)
            .expect_one();
    }
}

#[test]
fn a_signal_reaches_instances_on_every_partition() {
    let harness = Harness::new(2);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .signal("go")
            .start_event("s")
            .catch_event("wait", &signal_ref("go"))
            .end_event("e"),
    );
    let on_one = harness.create_instance_on(1, "p", "{}");
    let on_two = harness.create_instance_on(2, "p", "{}");
    harness.broadcast_signal_on(1, "go", "{}").unwrap();
    assert!(completed(&harness, 1, on_one, "p"));
    assert!(
        completed(&harness, 2, on_two, "p"),
        "{}",
        harness.records_of(2).log()
    );
}

#[test]
fn a_signal_throw_event_triggers_boundary_events_of_other_instances() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("worker")
            .signal("stop")
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("stopped", "t", &signal_ref("stop"), true)
            .end_event("aborted"),
    );
    harness.deploy_process(
        &ProcessBuilder::new("controller")
            .signal("stop")
            .start_event("s")
            .throw_event("send-stop", &signal_ref("stop"))
            .end_event_with("also-stop", &signal_ref("stop")),
    );
    let worker = harness.create_instance("worker", "{}");
    let controller = harness.create_instance("controller", "{}");
    assert!(completed(&harness, 1, controller, "controller"));
    harness
        .records()
        .with_intent(SignalIntent::Broadcasted)
        .expect_count(2);
    let records = harness.records().of_instance(worker);
    records
        .clone()
        .with_element("aborted")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records.with_element("done").expect_none();
}

#[test]
fn a_non_interrupting_signal_event_sub_process_runs_on_each_signal() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .signal("ping")
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .event_sub_process("on-ping")
            .detached(
                "ping-start",
                &format!(
                    r#"<bpmn:startEvent id="ping-start" isInterrupting="false">{}</bpmn:startEvent>"#,
                    signal_ref("ping")
                ),
            )
            .end_event("pong")
            .end_sub_process(),
    );
    let instance = harness.create_instance("p", "{}");
    harness.broadcast_signal("ping", "{}").unwrap();
    harness.broadcast_signal("ping", "{}").unwrap();
    harness
        .records()
        .with_element("pong")
        .with_intent(PI::ElementCompleted)
        .expect_count(2);
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    assert!(completed(&harness, 1, instance, "p"));
}
