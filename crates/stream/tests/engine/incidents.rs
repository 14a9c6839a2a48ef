use beeline_protocol::RejectionType;
use beeline_protocol::intent::{IncidentIntent, ProcessInstanceIntent as PI};
use beeline_protocol::value::IncidentRecord;
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

#[test]
fn an_input_mapping_failure_is_an_incident_and_resolving_retries_the_activation() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task_with(
                "t",
                "w",
                r#"<zeebe:ioMapping><zeebe:input source="=assert(order, order != null)" target="o"/></zeebe:ioMapping>"#,
            )
            .end_event("e"),
    );
    let instance = harness.create_instance("p", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "IO_MAPPING_ERROR");
    assert!(
        value
            .error_message
            .starts_with("failed to evaluate expression"),
        "{}",
        value.error_message
    );
    assert!(
        harness.activate_jobs("w", 1).is_empty(),
        "the task is stuck in activation"
    );
    harness
        .set_variables(instance, r#"{"order": 1}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    harness
        .records()
        .with_intent(IncidentIntent::Resolved)
        .expect_one();
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness
        .records()
        .with_element("t")
        .with_intent(PI::ElementActivating)
        .expect_one();
}

#[test]
fn an_output_mapping_failure_is_an_incident_on_completion() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task_with(
                "t",
                "w",
                r#"<zeebe:ioMapping><zeebe:output source="=assert(r, r != null)" target="out"/></zeebe:ioMapping>"#,
            )
            .end_event("e"),
    );
    harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, "{}").unwrap();
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    assert_eq!(
        incident.value_as::<IncidentRecord>().unwrap().error_type,
        "IO_MAPPING_ERROR"
    );
    harness
        .records()
        .with_element("t")
        .with_intent(PI::ElementCompleting)
        .expect_one();
    harness
        .records()
        .with_element("t")
        .with_intent(PI::ElementCompleted)
        .expect_none();
    let task = harness
        .records()
        .with_element("t")
        .with_intent(PI::ElementActivated)
        .expect_one()
        .key;
    harness.set_variables(task, r#"{"r": 5}"#, true).unwrap();
    harness.resolve_incident(incident.key).unwrap();
    harness
        .records()
        .with_element("t")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn resolving_an_unknown_incident_is_not_found() {
    let harness = Harness::new(1);
    let rejection = harness.resolve_incident(2_251_799_813_699_999).unwrap();
    assert_eq!(rejection.rejection_type, RejectionType::NotFound);
}

#[test]
fn canceling_an_instance_resolves_its_incidents() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .exclusive_gateway("g")
            .condition("=x")
            .end_event("e"),
    );
    let instance = harness.create_instance("p", r#"{"x": "not a boolean"}"#);
    harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    harness.cancel_instance(instance).unwrap();
    harness
        .records()
        .with_intent(IncidentIntent::Resolved)
        .expect_one();
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementTerminated)
        .expect_one();
}
