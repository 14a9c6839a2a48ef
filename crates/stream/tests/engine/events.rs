//! Events that cross elements: errors and escalations caught by boundary events and event
//! sub-processes, uncaught errors as incidents, and link events.

use beeline_protocol::intent::{
    EscalationIntent, IncidentIntent, JobIntent, ProcessEventIntent, ProcessInstanceIntent as PI,
};
use beeline_protocol::value::{EscalationRecord, IncidentRecord};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

use crate::json;

const ERRORS: &str =
    r#"<bpmn:error id="err-a" errorCode="A"/><bpmn:error id="err-b" errorCode="B"/>"#;

fn error_catch(reference: &str) -> String {
    format!(r#"<bpmn:errorEventDefinition errorRef="{reference}"/>"#)
}

fn catch_all() -> String {
    "<bpmn:errorEventDefinition/>".to_string()
}

fn variable(harness: &Harness, name: &str) -> Option<serde_json::Value> {
    harness
        .records()
        .with_intent(beeline_protocol::intent::VariableIntent::Created)
        .values::<beeline_protocol::value::VariableRecord>()
        .into_iter()
        .rev()
        .find(|v| v.name == name)
        .map(|v| json(v.value.as_bytes()))
}

#[test]
fn a_thrown_error_is_caught_by_the_boundary_event_with_its_code() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("on-a", "t", &error_catch("err-a"), true)
            .end_event("handled-a")
            .boundary_event("on-b", "t", &error_catch("err-b"), true)
            .end_event("handled-b"),
    );
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    harness.throw_error(job, "B", "went wrong").unwrap();

    harness
        .records()
        .with_intent(JobIntent::ErrorThrown)
        .expect_one();
    let lifecycle = harness.records().of_instance(instance).lifecycle();
    let after_throw: Vec<_> = lifecycle
        .iter()
        .skip_while(|(e, i)| !(e == "t" && *i == PI::ElementTerminating.into()))
        .cloned()
        .collect();
    assert_eq!(
        after_throw,
        crate::steps(&[
            ("t", PI::ElementTerminating),
            ("t", PI::ElementTerminated),
            ("on-b", PI::ElementActivating),
            ("on-b", PI::ElementActivated),
            ("on-b", PI::ElementCompleting),
            ("on-b", PI::ElementCompleted),
            ("flow_on-b_handled-b_3", PI::SequenceFlowTaken),
            ("handled-b", PI::ElementActivating),
            ("handled-b", PI::ElementActivated),
            ("handled-b", PI::ElementCompleting),
            ("handled-b", PI::ElementCompleted),
            ("p", PI::ElementCompleting),
            ("p", PI::ElementCompleted),
        ]),
        "{}",
        harness.records().log()
    );
    harness
        .records()
        .with_intent(ProcessEventIntent::Triggering)
        .expect_one();
    harness
        .records()
        .with_intent(ProcessEventIntent::Triggered)
        .expect_one();
    harness.records().with_element("on-a").expect_none();
}

#[test]
fn an_exact_code_wins_over_a_catch_all_and_a_catch_all_takes_any_code() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("any", "t", &catch_all(), true)
            .end_event("handled-any")
            .boundary_event("on-a", "t", &error_catch("err-a"), true)
            .end_event("handled-a"),
    );
    harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    harness.throw_error(job, "A", "").unwrap();
    harness
        .records()
        .with_element("handled-a")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness.records().with_element("any").expect_none();

    harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    harness.throw_error(job, "UNKNOWN", "").unwrap();
    harness
        .records()
        .with_element("handled-any")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn error_code_and_message_are_available_to_the_catching_event_output_mappings() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .detached(
                "on-a",
                r#"<bpmn:boundaryEvent id="on-a" attachedToRef="t"><bpmn:extensionElements><zeebe:ioMapping><zeebe:output source="=errorCode" target="code"/><zeebe:output source="=errorMessage" target="message"/><zeebe:output source="=reason" target="why"/></zeebe:ioMapping></bpmn:extensionElements><bpmn:errorEventDefinition errorRef="err-a"/></bpmn:boundaryEvent>"#,
            )
            .end_event("handled"),
    );
    harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    let command = beeline_protocol::value::JobRecord {
        error_code: "A".into(),
        error_message: "no stock".into(),
        variables: r#"{"reason": "sold out"}"#.into(),
        ..Default::default()
    };
    harness
        .execute(beeline_protocol::Record::command(
            job,
            JobIntent::ThrowError,
            command,
        ))
        .unwrap();
    assert_eq!(variable(&harness, "code"), Some(serde_json::json!("A")));
    assert_eq!(
        variable(&harness, "message"),
        Some(serde_json::json!("no stock"))
    );
    assert_eq!(
        variable(&harness, "why"),
        Some(serde_json::json!("sold out"))
    );
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_error_end_event_in_a_sub_process_is_caught_on_the_sub_process() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .sub_process("sub")
            .start_event("sub-start")
            .parallel_gateway("fork")
            .service_task("busy", "w")
            .end_event("busy-end")
            .move_to("fork")
            .element(
                "fail",
                r#"<bpmn:endEvent id="fail"><bpmn:errorEventDefinition errorRef="err-a"/></bpmn:endEvent>"#,
            )
            .end_sub_process()
            .end_event("done")
            .boundary_event("caught", "sub", &error_catch("err-a"), true)
            .end_event("handled"),
    );
    let instance = harness.create_instance("p", "{}");
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("busy")
        .with_intent(PI::ElementTerminated)
        .expect_one();
    records
        .clone()
        .with_element("sub")
        .with_intent(PI::ElementTerminated)
        .expect_one();
    records
        .clone()
        .with_element("handled")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records.clone().with_element("done").expect_none();
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    // The waiting job was cancelled with its task.
    harness
        .records()
        .with_intent(JobIntent::Canceled)
        .expect_one();
    assert!(harness.activate_jobs("w", 1).is_empty());
}

#[test]
fn an_interrupting_error_event_sub_process_replaces_the_scope_content() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .event_sub_process("on-error")
            .detached(
                "esp-start",
                r#"<bpmn:startEvent id="esp-start"><bpmn:errorEventDefinition errorRef="err-a"/></bpmn:startEvent>"#,
            )
            .service_task("compensate", "fix")
            .end_event("esp-end")
            .end_sub_process(),
    );
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    harness.throw_error(job, "A", "").unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("t")
        .with_intent(PI::ElementTerminated)
        .expect_one();
    records
        .clone()
        .with_element("on-error")
        .with_intent(PI::ElementActivated)
        .expect_one();
    let (fix, _) = harness.activate_job("fix");
    harness.complete_job(fix, "{}").unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("on-error")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records.clone().with_element("done").expect_none();
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_uncaught_error_is_an_incident_on_the_task() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("on-a", "t", &error_catch("err-a"), true)
            .end_event("handled"),
    );
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    harness.throw_error(job, "NOPE", "bad things").unwrap();
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "UNHANDLED_ERROR_EVENT");
    assert!(
        value.error_message.contains("NOPE"),
        "{}",
        value.error_message
    );
    assert_eq!(value.process_instance_key, instance);
    assert_eq!(value.element_id, "t");
    assert_eq!(value.job_key, job);
    harness.records().with_element("on-a").expect_none();
}

#[test]
fn an_uncaught_error_end_event_is_an_incident_on_the_end_event() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .element(
                "fail",
                r#"<bpmn:endEvent id="fail"><bpmn:errorEventDefinition errorRef="err-b"/></bpmn:endEvent>"#,
            ),
    );
    harness.create_instance("p", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "UNHANDLED_ERROR_EVENT");
    assert_eq!(value.element_id, "fail");
}

#[test]
fn a_non_interrupting_escalation_boundary_event_lets_the_sub_process_go_on() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(r#"<bpmn:escalation id="esc" escalationCode="LATE"/>"#)
            .start_event("s")
            .sub_process("sub")
            .start_event("sub-start")
            .element(
                "raise",
                r#"<bpmn:intermediateThrowEvent id="raise"><bpmn:escalationEventDefinition escalationRef="esc"/></bpmn:intermediateThrowEvent>"#,
            )
            .service_task("t", "w")
            .end_event("sub-end")
            .end_sub_process()
            .end_event("done")
            .boundary_event(
                "on-late",
                "sub",
                r#"<bpmn:escalationEventDefinition escalationRef="esc"/>"#,
                false,
            )
            .service_task("notify", "n")
            .end_event("notified"),
    );
    let instance = harness.create_instance("p", "{}");
    let escalated = harness
        .records()
        .with_intent(EscalationIntent::Escalated)
        .expect_one();
    let value = escalated.value_as::<EscalationRecord>().unwrap();
    assert_eq!(value.escalation_code, "LATE");
    assert_eq!(value.throw_element_id, "raise");
    assert_eq!(value.catch_element_id, "on-late");
    // Both the task after the throw event and the boundary path run.
    let (notify, _) = harness.activate_job("n");
    let (work, _) = harness.activate_job("w");
    harness.complete_job(notify, "{}").unwrap();
    harness.complete_job(work, "{}").unwrap();
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("notified")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records
        .clone()
        .with_element("done")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_uncaught_escalation_is_recorded_and_the_flow_continues() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(r#"<bpmn:escalation id="esc" escalationCode="LATE"/>"#)
            .start_event("s")
            .element(
                "raise",
                r#"<bpmn:intermediateThrowEvent id="raise"><bpmn:escalationEventDefinition escalationRef="esc"/></bpmn:intermediateThrowEvent>"#,
            )
            .end_event("done"),
    );
    let instance = harness.create_instance("p", "{}");
    harness
        .records()
        .with_intent(EscalationIntent::NotEscalated)
        .expect_one();
    harness
        .records()
        .of_instance(instance)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_none();
}

#[test]
fn a_link_throw_event_continues_at_its_catch_event() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .element(
                "go",
                r#"<bpmn:intermediateThrowEvent id="go"><bpmn:linkEventDefinition name="jump"/></bpmn:intermediateThrowEvent>"#,
            )
            .detached(
                "land",
                r#"<bpmn:intermediateCatchEvent id="land"><bpmn:linkEventDefinition name="jump"/></bpmn:intermediateCatchEvent>"#,
            )
            .end_event("done"),
    );
    let instance = harness.create_instance("p", "{}");
    let lifecycle = harness.records().of_instance(instance).lifecycle();
    let elements: Vec<_> = lifecycle
        .iter()
        .filter(|(_, i)| *i == PI::ElementCompleted.into())
        .map(|(e, _)| e.as_str())
        .collect();
    assert_eq!(elements, ["s", "go", "land", "done", "p"]);
}

#[test]
fn an_error_thrown_after_a_restart_is_caught_the_same_way() {
    let mut harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .root(ERRORS)
            .start_event("s")
            .service_task("t", "w")
            .end_event("done")
            .boundary_event("on-a", "t", &error_catch("err-a"), true)
            .end_event("handled"),
    );
    harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    harness.snapshot(1);
    harness.restart(1);
    harness.throw_error(job, "A", "").unwrap();
    harness
        .records()
        .with_element("handled")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}
