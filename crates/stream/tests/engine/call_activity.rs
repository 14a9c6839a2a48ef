//! Call activities: a child process instance on the same partition, the variables handed down
//! and back, binding types, cancellation, errors and escalations crossing into the parent,
//! incidents, and multi-instance call activities.

use beeline_protocol::intent::{
    IncidentIntent, JobIntent, ProcessInstanceCreationIntent, ProcessInstanceIntent as PI,
};
use beeline_protocol::value::{
    DeploymentRecord, IncidentRecord, ProcessInstanceCreationRecord, ProcessInstanceRecord,
    VariableRecord,
};
use beeline_protocol::{Record, RecordType, RejectionType, ValueType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

use crate::json;

/// `start -> work (job "child-work") -> end`.
fn child() -> ProcessBuilder {
    ProcessBuilder::new("child")
        .start_event("child-start")
        .service_task("work", "child-work")
        .end_event("child-end")
}

/// `start -> call (calls child) -> end`, with `called_element` attributes and extensions.
fn parent(called_element: &str, extensions: &str) -> ProcessBuilder {
    ProcessBuilder::new("parent")
        .start_event("start")
        .call_activity("call", called_element, extensions)
        .end_event("end")
}

/// The key of the process instance the call activity created.
fn child_instance(harness: &Harness) -> i64 {
    harness
        .records()
        .with_intent(PI::ElementActivating)
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>().is_some_and(|v| {
                v.bpmn_element_type == "PROCESS" && v.parent_element_instance_key > 0
            })
        })
        .expect_one()
        .key
}

/// The variables set in `scope`: (name, JSON value), latest value per name.
fn variables_in(harness: &Harness, scope: i64) -> serde_json::Map<String, serde_json::Value> {
    let mut found = serde_json::Map::new();
    for variable in harness
        .records()
        .events()
        .with_value_type(ValueType::Variable)
        .values::<VariableRecord>()
    {
        if variable.scope_key == scope {
            found.insert(variable.name.clone(), json(variable.value.as_bytes()));
        }
    }
    found
}

#[test]
fn a_call_activity_runs_the_child_and_completes_with_it_in_zeebes_order() {
    let harness = Harness::new(1);
    harness.deploy_process(&child());
    harness.deploy_process(&parent(r#"processId="child""#, ""));
    let instance = harness.create_instance("parent", r#"{"order": 7}"#);
    let child = child_instance(&harness);
    let call = harness
        .records()
        .with_element("call")
        .with_intent(PI::ElementActivated)
        .expect_one()
        .key;
    // The child is an instance of its own, created by the call activity.
    let created = harness
        .records()
        .with_key(child)
        .with_intent(PI::ElementActivating)
        .expect_one();
    let value = created.value_as::<ProcessInstanceRecord>().unwrap();
    assert_eq!(
        (
            value.process_instance_key,
            value.parent_process_instance_key,
            value.parent_element_instance_key,
            value.bpmn_process_id.as_str()
        ),
        (child, instance, call, "child")
    );
    assert_eq!(
        variables_in(&harness, child)["order"],
        7,
        "the parent's variables are handed down"
    );
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ELEMENT_ACTIVATING CALL_ACTIVITY call",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED CALL_ACTIVITY call",
        "PROCESS_INSTANCE ACTIVATE_ELEMENT PROCESS child",
        "VARIABLE CREATED order",
        "PROCESS_INSTANCE ELEMENT_ACTIVATING PROCESS child",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED PROCESS child",
        "PROCESS_INSTANCE ACTIVATE_ELEMENT START_EVENT child-start",
        "JOB CREATED",
    ]);
    let (job, work) = harness.activate_job("child-work");
    assert_eq!(work.process_instance_key, child);
    harness.complete_job(job, r#"{"shipped": true}"#).unwrap();
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ELEMENT_COMPLETED END_EVENT child-end",
        "PROCESS_INSTANCE COMPLETE_ELEMENT PROCESS child",
        "PROCESS_INSTANCE ELEMENT_COMPLETING PROCESS child",
        "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS child",
        "PROCESS_INSTANCE COMPLETE_ELEMENT CALL_ACTIVITY call",
        "PROCESS_INSTANCE ELEMENT_COMPLETING CALL_ACTIVITY call",
        "VARIABLE CREATED shipped",
        "PROCESS_INSTANCE ELEMENT_COMPLETED CALL_ACTIVITY call",
        "PROCESS_INSTANCE SEQUENCE_FLOW_TAKEN SEQUENCE_FLOW flow_call_end_1",
        "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS parent",
    ]);
    let back = variables_in(&harness, instance);
    assert_eq!(back["shipped"], true, "the child's variables come back");
    assert_eq!(back["order"], 7);
}

#[test]
fn variables_go_down_and_back_only_as_the_call_activity_allows() {
    let harness = Harness::new(1);
    harness.deploy_process(&child());
    harness.deploy_process(&parent(
        r#"processId="child" propagateAllParentVariables="false" propagateAllChildVariables="false""#,
        r#"<zeebe:ioMapping><zeebe:input source="=order * 2" target="doubled"/><zeebe:output source="=shipped" target="done"/></zeebe:ioMapping>"#,
    ));
    let instance = harness.create_instance("parent", r#"{"order": 7, "secret": "s"}"#);
    let child = child_instance(&harness);
    let down = variables_in(&harness, child);
    assert_eq!(
        down.keys().collect::<Vec<_>>(),
        vec!["doubled"],
        "only the input mappings' results go down"
    );
    assert_eq!(down["doubled"], 14);
    let (job, _) = harness.activate_job("child-work");
    harness
        .complete_job(job, r#"{"shipped": "yes", "internal": 1}"#)
        .unwrap();
    let back = variables_in(&harness, instance);
    assert_eq!(
        back["done"], "yes",
        "the output mapping maps the child's variables"
    );
    assert!(!back.contains_key("internal") && !back.contains_key("shipped"));
}

#[test]
fn without_output_mappings_nor_propagation_the_childs_variables_stay_behind() {
    let harness = Harness::new(1);
    harness.deploy_process(&child());
    harness.deploy_process(&parent(
        r#"processId="child" propagateAllChildVariables="false""#,
        "",
    ));
    let instance = harness.create_instance("parent", "{}");
    let (job, _) = harness.activate_job("child-work");
    harness.complete_job(job, r#"{"shipped": true}"#).unwrap();
    assert!(!variables_in(&harness, instance).contains_key("shipped"));
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn the_process_id_may_be_an_expression() {
    let harness = Harness::new(1);
    harness.deploy_process(&child());
    harness.deploy_process(&parent(r#"processId="=kind""#, ""));
    harness.create_instance("parent", r#"{"kind": "child"}"#);
    child_instance(&harness);

    let wrong = Harness::new(1);
    wrong.deploy_process(&parent(r#"processId="=kind""#, ""));
    wrong.create_instance("parent", r#"{"kind": 3}"#);
    let incident = wrong
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert_eq!(
        value.error_message,
        "Expected result of the expression 'kind' to be 'STRING', but was 'NUMBER'."
    );
}

#[test]
fn a_missing_called_process_is_an_incident_resolved_by_deploying_it() {
    let harness = Harness::new(1);
    harness.deploy_process(&parent(r#"processId="child""#, ""));
    let instance = harness.create_instance("parent", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "CALLED_ELEMENT_ERROR");
    assert_eq!(
        value.error_message,
        "Expected process with BPMN process id 'child' to be deployed, but not found."
    );
    assert_eq!(value.element_id, "call");
    harness
        .records()
        .with_element("call")
        .with_intent(PI::ElementActivated)
        .expect_none();

    harness.deploy_process(&child());
    harness.resolve_incident(incident.key).unwrap();
    let child = child_instance(&harness);
    let (job, _) = harness.activate_job("child-work");
    harness.complete_job(job, "{}").unwrap();
    harness
        .records()
        .with_key(child)
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_called_process_without_a_none_start_event_is_an_incident() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("child")
            .message("go", None)
            .start_event_with(
                "by-message",
                &beeline_stream::testkit::bpmn::message_ref("go"),
            )
            .end_event("e"),
    );
    harness.deploy_process(&parent(r#"processId="child""#, ""));
    harness.create_instance("parent", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    assert_eq!(
        incident.value_as::<IncidentRecord>().unwrap().error_message,
        "Expected process with BPMN process id 'child' to have a none start event, but not found."
    );
}

/// Deploys `resources` in one deployment.
fn deploy_together(harness: &Harness, resources: &[(&str, &ProcessBuilder)]) {
    let built: Vec<(String, String)> = resources
        .iter()
        .map(|(name, process)| (name.to_string(), process.build()))
        .collect();
    let refs: Vec<(&str, &str)> = built
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_str()))
        .collect();
    let deployed = harness.deploy_resources(&refs).unwrap();
    assert_eq!(
        deployed.record_type,
        RecordType::Event,
        "{}",
        deployed.rejection_reason
    );
    assert!(deployed.value_as::<DeploymentRecord>().is_some());
}

#[test]
fn binding_types_choose_latest_deployment_or_version_tag() {
    let harness = Harness::new(1);
    let v1 = ProcessBuilder::new("child")
        .version_tag("one")
        .start_event("s")
        .service_task("work", "v1")
        .end_event("e");
    deploy_together(
        &harness,
        &[
            ("child.bpmn", &v1),
            (
                "by-deployment.bpmn",
                &ProcessBuilder::new("by-deployment")
                    .start_event("s")
                    .call_activity("call", r#"processId="child" bindingType="deployment""#, "")
                    .end_event("e"),
            ),
        ],
    );
    harness.deploy_process(
        &ProcessBuilder::new("child")
            .start_event("s")
            .service_task("work", "v2")
            .end_event("e"),
    );
    harness.deploy_process(
        &ProcessBuilder::new("by-latest")
            .start_event("s")
            .call_activity("call", r#"processId="child""#, "")
            .end_event("e"),
    );
    harness.deploy_process(
        &ProcessBuilder::new("by-tag")
            .start_event("s")
            .call_activity(
                "call",
                r#"processId="child" bindingType="versionTag" versionTag="one""#,
                "",
            )
            .end_event("e"),
    );
    harness.deploy_process(
        &ProcessBuilder::new("by-missing-tag")
            .start_event("s")
            .call_activity(
                "call",
                r#"processId="child" bindingType="versionTag" versionTag="two""#,
                "",
            )
            .end_event("e"),
    );
    harness.create_instance("by-deployment", "{}");
    harness.activate_job("v1");
    harness.create_instance("by-latest", "{}");
    harness.activate_job("v2");
    harness.create_instance("by-tag", "{}");
    harness.activate_job("v1");
    harness.create_instance("by-missing-tag", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    assert_eq!(
        incident.value_as::<IncidentRecord>().unwrap().error_message,
        "Expected to call process with BPMN process id 'child' and version tag 'two', but no such process found. To resolve this incident, deploy a process with the given process id and version tag."
    );
}

#[test]
fn cancelling_the_parent_cancels_the_child_and_the_child_cannot_be_cancelled_alone() {
    let harness = Harness::new(1);
    harness.deploy_process(&child());
    harness.deploy_process(&parent(r#"processId="child""#, ""));
    let instance = harness.create_instance("parent", "{}");
    let child = child_instance(&harness);

    let refused = harness.cancel_instance(child).unwrap();
    assert_eq!(refused.rejection_type, RejectionType::InvalidState);
    assert_eq!(
        refused.rejection_reason,
        format!(
            "Expected to cancel a process instance with key '{child}', but it is created by a parent process instance. Cancel the root process instance '{instance}' instead."
        )
    );

    harness.cancel_instance(instance).unwrap();
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ELEMENT_TERMINATING PROCESS parent",
        "PROCESS_INSTANCE ELEMENT_TERMINATING CALL_ACTIVITY call",
        "PROCESS_INSTANCE TERMINATE_ELEMENT PROCESS child",
        "PROCESS_INSTANCE ELEMENT_TERMINATING PROCESS child",
        "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK work",
        "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS child",
        "PROCESS_INSTANCE ELEMENT_TERMINATED CALL_ACTIVITY call",
        "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS parent",
    ]);
    harness
        .records()
        .with_intent(JobIntent::Canceled)
        .expect_one();
}

#[test]
fn an_interrupting_boundary_event_on_the_call_activity_terminates_the_child() {
    let harness = Harness::new(1);
    harness.deploy_process(&child());
    harness.deploy_process(
        &parent(r#"processId="child""#, "")
            .boundary_event("timeout", "call", &timer("timeDuration", "PT10S"), true)
            .end_event("timed-out"),
    );
    let instance = harness.create_instance("parent", "{}");
    let child = child_instance(&harness);
    harness.advance_time(10_000);
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ELEMENT_TERMINATING CALL_ACTIVITY call",
        "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS child",
        "PROCESS_INSTANCE ELEMENT_TERMINATED CALL_ACTIVITY call",
        "PROCESS_INSTANCE ELEMENT_COMPLETED BOUNDARY_EVENT timeout",
        "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS parent",
    ]);
    harness
        .records()
        .with_key(child)
        .with_intent(PI::ElementTerminated)
        .expect_one();
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_error_thrown_in_the_child_is_caught_by_the_call_activity() {
    let harness = Harness::new(1);
    let error = r#"<bpmn:error id="err" errorCode="NOT_FOUND"/>"#;
    harness.deploy_process(&child().root(error));
    harness.deploy_process(
        &parent(r#"processId="child""#, "")
            .root(error)
            .boundary_event(
                "on-error",
                "call",
                r#"<bpmn:errorEventDefinition errorRef="err"/>"#,
                true,
            )
            .end_event("failed"),
    );
    let instance = harness.create_instance("parent", "{}");
    let child = child_instance(&harness);
    let (job, _) = harness.activate_job("child-work");
    harness.throw_error(job, "NOT_FOUND", "gone").unwrap();
    harness.records().expect_subsequence(&[
        "JOB ERROR_THROWN",
        "PROCESS_INSTANCE ELEMENT_TERMINATING CALL_ACTIVITY call",
        "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK work",
        "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS child",
        "PROCESS_INSTANCE ELEMENT_TERMINATED CALL_ACTIVITY call",
        "PROCESS_INSTANCE ELEMENT_COMPLETED BOUNDARY_EVENT on-error",
        "PROCESS_INSTANCE ELEMENT_COMPLETED END_EVENT failed",
        "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS parent",
    ]);
    harness
        .records()
        .with_key(child)
        .with_intent(PI::ElementTerminated)
        .expect_one();
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_none();
}

#[test]
fn an_error_end_event_in_the_child_nobody_catches_is_an_incident_in_the_child() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("child")
            .root(r#"<bpmn:error id="err" errorCode="OOPS"/>"#)
            .start_event("s")
            .end_event_with("fail", r#"<bpmn:errorEventDefinition errorRef="err"/>"#),
    );
    harness.deploy_process(&parent(r#"processId="child""#, ""));
    harness.create_instance("parent", "{}");
    let child = child_instance(&harness);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(
        (
            value.error_type.as_str(),
            value.process_instance_key,
            value.element_id.as_str()
        ),
        ("UNHANDLED_ERROR_EVENT", child, "fail")
    );
}

#[test]
fn an_escalation_in_the_child_reaches_a_non_interrupting_boundary_event_of_the_call_activity() {
    let harness = Harness::new(1);
    let escalation = r#"<bpmn:escalation id="esc" escalationCode="LATE"/>"#;
    harness.deploy_process(
        &ProcessBuilder::new("child")
            .root(escalation)
            .start_event("s")
            .throw_event(
                "late",
                r#"<bpmn:escalationEventDefinition escalationRef="esc"/>"#,
            )
            .service_task("work", "child-work")
            .end_event("e"),
    );
    harness.deploy_process(
        &parent(r#"processId="child""#, "")
            .root(escalation)
            .boundary_event(
                "on-late",
                "call",
                r#"<bpmn:escalationEventDefinition escalationRef="esc"/>"#,
                false,
            )
            .service_task("notify", "notify"),
    );
    harness.create_instance("parent", "{}");
    harness.activate_job("notify");
    let (job, _) = harness.activate_job("child-work");
    harness.complete_job(job, "{}").unwrap();
    harness
        .records()
        .with_element("call")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_multi_instance_call_activity_calls_the_child_once_per_item() {
    let harness = Harness::new(1);
    harness.deploy_process(&child());
    // An output mapping, as Zeebe's docs recommend for multi-instance call activities: without
    // one, every child hands back all its variables, its copy of the output collection too.
    harness.deploy_process(
        &parent(
            r#"processId="child""#,
            r#"<zeebe:ioMapping><zeebe:output source="=shipped" target="shipped"/></zeebe:ioMapping>"#,
        )
        .multi_instance(
            "call",
            false,
            r#"inputCollection="=items" inputElement="item" outputCollection="results" outputElement="=shipped""#,
            None,
        ),
    );
    let instance = harness.create_instance("parent", r#"{"items": ["a", "b", "c"]}"#);
    let jobs = harness.activate_jobs("child-work", 10);
    assert_eq!(jobs.len(), 3);
    let mut items: Vec<String> = jobs
        .iter()
        .map(|(_, job)| json(&job.variables)["item"].as_str().unwrap().to_string())
        .collect();
    items.sort();
    assert_eq!(items, vec!["a", "b", "c"], "each child got its item");
    for (key, job) in &jobs {
        let item = json(&job.variables)["item"].as_str().unwrap().to_string();
        harness
            .complete_job(*key, &format!(r#"{{"shipped": "{item}!"}}"#))
            .unwrap();
    }
    assert_eq!(
        variables_in(&harness, instance)["results"],
        serde_json::json!(["a!", "b!", "c!"])
    );
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_process_calling_itself_stops_at_the_maximum_depth_with_an_incident() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("recursive")
            .start_event("s")
            .call_activity("again", r#"processId="recursive""#, "")
            .end_event("e"),
    );
    let created = harness
        .execute(Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            ProcessInstanceCreationRecord {
                bpmn_process_id: "recursive".into(),
                version: -1,
                ..Default::default()
            },
        ))
        .unwrap();
    assert_eq!(created.record_type, RecordType::Event);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "CALLED_ELEMENT_ERROR");
    assert!(
        value
            .error_message
            .starts_with("The call activity has reached the maximum depth of 1000."),
        "{}",
        value.error_message
    );
    let instances = harness
        .records()
        .with_intent(PI::ElementActivated)
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.bpmn_element_type == "PROCESS")
        })
        .len();
    assert_eq!(instances, 1000);
}
