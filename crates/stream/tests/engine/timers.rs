//! Timers on intermediate catch events, boundary events, event sub-processes and start
//! events: due dates, cycles, FEEL timers, cancellation.

use beeline_protocol::RejectionType;
use beeline_protocol::intent::{
    IncidentIntent, JobIntent, ProcessInstanceIntent as PI, TimerIntent,
};
use beeline_protocol::value::{IncidentRecord, ProcessInstanceRecord, TimerRecord};
use beeline_stream::Clock;
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

fn timers(harness: &Harness, intent: TimerIntent) -> Vec<TimerRecord> {
    harness
        .records()
        .with_intent(intent)
        .values::<TimerRecord>()
}

#[test]
fn an_intermediate_timer_waits_for_its_duration() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .catch_event("wait", &timer("timeDuration", "PT1M"))
            .end_event("e"),
    );
    let start = harness.clock().now_ms();
    let instance = harness.create_instance("p", "{}");
    let created = timers(&harness, TimerIntent::Created);
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].due_date, start + 60_000);
    assert_eq!(created[0].target_element_id, "wait");
    assert_eq!(created[0].repetitions, 1);
    assert_eq!(created[0].process_instance_key, instance);

    harness.advance_time(59_999);
    harness
        .records()
        .with_intent(TimerIntent::Triggered)
        .expect_none();
    harness.advance_time(1);
    harness
        .records()
        .with_intent(TimerIntent::Triggered)
        .expect_one();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("wait")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_timer_date_in_the_past_is_due_at_once_and_a_feel_timer_reads_variables() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .catch_event("past", &timer("timeDate", "2020-01-01T00:00:00Z"))
            .catch_event("feel", &timer("timeDuration", "=duration(delay)"))
            .end_event("e"),
    );
    let instance = harness.create_instance("p", r#"{"delay": "PT5S"}"#);
    harness.advance_time(0);
    harness
        .records()
        .with_element("past")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    let feel = timers(&harness, TimerIntent::Created)
        .into_iter()
        .find(|t| t.target_element_id == "feel")
        .expect("the FEEL timer");
    assert_eq!(feel.due_date, harness.clock().now_ms() + 5_000);
    harness.advance_time(5_000);
    harness
        .records()
        .of_instance(instance)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_timer_expression_that_fails_is_an_incident_and_resolving_retries_it() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .catch_event("wait", &timer("timeDuration", "=delay"))
            .end_event("e"),
    );
    let instance = harness.create_instance("p", r#"{"delay": 12}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert!(
        value.error_message.contains("delay"),
        "{}",
        value.error_message
    );
    harness
        .records()
        .with_intent(TimerIntent::Created)
        .expect_none();
    harness
        .set_variables(instance, r#"{"delay": "PT1S"}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    harness.advance_time(1_000);
    harness
        .records()
        .of_instance(instance)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_invalid_static_timer_is_refused_at_deployment() {
    let harness = Harness::new(1);
    let rejection = harness
        .deploy(
            "bad.bpmn",
            &ProcessBuilder::new("p")
                .start_event("s")
                .catch_event("wait", &timer("timeDuration", "PT10X"))
                .end_event("e")
                .build(),
        )
        .unwrap();
    assert_eq!(rejection.rejection_type, RejectionType::InvalidArgument);
    assert!(
        rejection.rejection_reason.contains("- Element: wait")
            && rejection
                .rejection_reason
                .contains("Invalid timer duration expression"),
        "{}",
        rejection.rejection_reason
    );
}

#[test]
fn an_interrupting_timer_boundary_event_cancels_the_task() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("late", "t", &timer("timeDuration", "PT10S"), true)
            .end_event("escalated"),
    );
    let instance = harness.create_instance("p", "{}");
    harness.advance_time(10_000);
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("t")
        .with_intent(PI::ElementTerminated)
        .expect_one();
    records
        .clone()
        .with_element("escalated")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records.clone().with_element("done").expect_none();
    harness
        .records()
        .with_intent(JobIntent::Canceled)
        .expect_one();
    assert!(harness.activate_jobs("w", 1).is_empty());
}

#[test]
fn a_non_interrupting_timer_cycle_fires_its_repetitions_while_the_task_runs() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("remind", "t", &timer("timeCycle", "R3/PT10S"), false)
            .end_event("reminded"),
    );
    let instance = harness.create_instance("p", "{}");
    for _ in 0..5 {
        harness.advance_time(10_000);
    }
    let triggered = timers(&harness, TimerIntent::Triggered);
    assert_eq!(
        triggered.iter().map(|t| t.repetitions).collect::<Vec<_>>(),
        [3, 2, 1],
        "{}",
        harness.records().log()
    );
    harness
        .records()
        .with_element("reminded")
        .with_intent(PI::ElementCompleted)
        .expect_count(3);
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    harness
        .records()
        .of_instance(instance)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_unbounded_cycle_is_canceled_when_the_task_completes() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("remind", "t", &timer("timeCycle", "R/PT1M"), false)
            .end_event("reminded"),
    );
    harness.create_instance("p", "{}");
    harness.advance_time(60_000);
    harness.advance_time(60_000);
    assert_eq!(timers(&harness, TimerIntent::Triggered).len(), 2);
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    harness
        .records()
        .with_intent(TimerIntent::Canceled)
        .expect_one();
    harness.advance_time(600_000);
    assert_eq!(timers(&harness, TimerIntent::Triggered).len(), 2);
}

#[test]
fn canceling_an_instance_cancels_its_timers() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .sub_process("sub")
            .start_event("sub-start")
            .catch_event("wait", &timer("timeDuration", "PT1H"))
            .end_event("sub-end")
            .end_sub_process()
            .end_event("e")
            .boundary_event("sub-late", "sub", &timer("timeDuration", "PT2H"), true)
            .end_event("late"),
    );
    let instance = harness.create_instance("p", "{}");
    assert_eq!(timers(&harness, TimerIntent::Created).len(), 2);
    harness.cancel_instance(instance).unwrap();
    assert_eq!(timers(&harness, TimerIntent::Canceled).len(), 2);
    harness.advance_time(3 * 3_600_000);
    harness
        .records()
        .with_intent(TimerIntent::Triggered)
        .expect_none();
}

#[test]
fn a_non_interrupting_timer_event_sub_process_runs_beside_the_process() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .event_sub_process("status")
            .detached(
                "status-start",
                &format!(
                    r#"<bpmn:startEvent id="status-start" isInterrupting="false">{}</bpmn:startEvent>"#,
                    timer("timeCycle", "R2/PT30S")
                ),
            )
            .service_task("report", "r")
            .end_event("reported")
            .end_sub_process(),
    );
    let instance = harness.create_instance("p", "{}");
    harness.advance_time(30_000);
    harness.advance_time(30_000);
    let reports = harness.activate_jobs("r", 10);
    assert_eq!(reports.len(), 2);
    for (key, _) in reports {
        harness.complete_job(key, "{}").unwrap();
    }
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("status")
        .with_intent(PI::ElementCompleted)
        .expect_count(2);
    records
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_timer_start_event_cycle_starts_instances_and_a_new_version_replaces_it() {
    let harness = Harness::new(1);
    let v1 = ProcessBuilder::new("p")
        .start_event_with("tick", &timer("timeCycle", "R3/PT1M"))
        .end_event("e");
    harness.deploy_process(&v1);
    let created = timers(&harness, TimerIntent::Created);
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].element_instance_key, -1);
    assert_eq!(created[0].process_instance_key, -1);
    harness.advance_time(60_000);
    harness.advance_time(60_000);
    let started = |harness: &Harness| {
        harness
            .records()
            .with_element("tick")
            .with_intent(PI::ElementCompleted)
            .len()
    };
    assert_eq!(started(&harness), 2);
    let instances = harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .values::<ProcessInstanceRecord>();
    assert_eq!(instances.len(), 2);

    // Version 2 fires every 5 minutes; the remaining repetition of version 1 is gone.
    let v2 = ProcessBuilder::new("p")
        .start_event_with("tick", &timer("timeCycle", "R/PT5M"))
        .end_event("e2");
    harness.deploy_process(&v2);
    harness
        .records()
        .with_intent(TimerIntent::Canceled)
        .expect_one();
    harness.advance_time(60_000);
    assert_eq!(started(&harness), 2);
    harness.advance_time(4 * 60_000);
    assert_eq!(started(&harness), 3);
    harness
        .records()
        .with_element("e2")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn timers_survive_a_restart() {
    let mut harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .catch_event("wait", &timer("timeDuration", "PT1M"))
            .end_event("e"),
    );
    let instance = harness.create_instance("p", "{}");
    harness.restart(1);
    harness.advance_time(60_000);
    harness
        .records()
        .of_instance(instance)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_cron_cycle_fires_at_each_match() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            // Every full minute.
            .boundary_event("tick", "t", &timer("timeCycle", "0 * * * * *"), false)
            .end_event("ticked"),
    );
    harness.create_instance("p", "{}");
    let created = timers(&harness, TimerIntent::Created);
    let first = created[0].due_date;
    assert_eq!(first % 60_000, 0, "due at a full minute");
    assert!(first > harness.clock().now_ms() && first - harness.clock().now_ms() <= 60_000);
    assert_eq!(created[0].repetitions, -1);
    harness.advance_time(first - harness.clock().now_ms());
    harness.advance_time(60_000);
    let triggered = timers(&harness, TimerIntent::Triggered);
    assert_eq!(
        triggered.iter().map(|t| t.due_date).collect::<Vec<_>>(),
        [first, first + 60_000]
    );
}

/// The processing loop's own wake-up, not the test kit's explicit scheduler run: a new timer
/// must shorten the loop's sleep. (Before the fix, a timer created while nothing else was
/// scheduled was never triggered by a running node.)
#[test]
fn a_new_timer_wakes_the_running_partition_without_an_explicit_scheduler_run() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .catch_event("wait", &timer("timeDuration", "PT0.2S"))
            .end_event("e"),
    );
    harness.create_instance("p", "{}");
    // Only the clock moves; the partition must notice on its own, after ~200 ms of real time.
    harness.clock().advance(200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while timers(&harness, TimerIntent::Triggered).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the due timer was not triggered by the running partition within 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_pinned_clock_is_every_partitions_time_until_it_is_reset() {
    let harness = Harness::new(2);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .catch_event("wait", &timer("timeDuration", "PT1H"))
            .end_event("e"),
    );
    let start = harness.clock().now_ms();
    let instance = harness.create_instance_on(2, "p", "{}");
    // Pinned from partition 1, distributed to partition 2 where the timer waits.
    let pinned = harness
        .change_clock_on(1, Some(start + 2 * 3_600_000))
        .unwrap();
    assert_eq!(
        pinned.intent,
        beeline_protocol::intent::ClockIntent::Pinned.into()
    );
    harness
        .records_of(2)
        .with_intent(beeline_protocol::intent::ClockIntent::Pinned)
        .expect_one();
    harness.advance_time(0);
    let triggered = harness
        .records_of(2)
        .with_intent(TimerIntent::Triggered)
        .expect_one();
    assert_eq!(
        triggered.timestamp,
        start + 2 * 3_600_000,
        "the pinned instant"
    );
    harness
        .records_of(2)
        .of_instance(instance)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    // Time stands still while pinned: the harness's clock moving changes nothing.
    harness.advance_time(10 * 3_600_000);
    let second = harness.create_instance_on(2, "p", "{}");
    let on_2 = |intent| {
        harness
            .records_of(2)
            .with_intent(intent)
            .values::<TimerRecord>()
    };
    assert_eq!(
        on_2(TimerIntent::Created).last().unwrap().due_date,
        start + 3 * 3_600_000
    );
    harness.advance_time(0);
    assert_eq!(on_2(TimerIntent::Triggered).len(), 1);

    // Reset: the harness's clock (now 10 h on) is the time again, and the timer is due.
    let reset = harness.change_clock_on(1, None).unwrap();
    assert_eq!(
        reset.intent,
        beeline_protocol::intent::ClockIntent::Resetted.into()
    );
    harness.advance_time(0);
    assert_eq!(on_2(TimerIntent::Triggered).len(), 2);
    harness
        .records_of(2)
        .of_instance(second)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    let negative = harness.change_clock_on(1, Some(-5)).unwrap();
    assert_eq!(
        negative.rejection_type,
        beeline_protocol::RejectionType::InvalidArgument
    );
}
