//! Multi-instance activities: a body with one inner instance per item of its input collection,
//! in parallel or one after another; the output collection, the completion condition and its
//! counts, boundary events on the body, incidents, and a collection of 10,000 items in bounded
//! batches.

use std::collections::BTreeMap;

use beeline_protocol::intent::{
    IncidentIntent, JobIntent, MultiInstanceIntent, ProcessInstanceIntent as PI, VariableIntent,
};
use beeline_protocol::value::{
    IncidentRecord, JobRecord, MultiInstanceRecord, ProcessInstanceRecord, VariableRecord,
};
use beeline_protocol::{RecordType, RejectionType, ValueType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

use crate::json;

const ITEMS: &str = r#"inputCollection="=items" inputElement="item" outputCollection="results" outputElement="=result""#;

/// `start -> task (multi-instance service task of type "w") -> end`.
fn items_process(sequential: bool, completion_condition: Option<&str>) -> ProcessBuilder {
    ProcessBuilder::new("p")
        .start_event("start")
        .service_task("task", "w")
        .multi_instance("task", sequential, ITEMS, completion_condition)
        .end_event("end")
}

/// The latest value of `name` in `scope`, as JSON.
fn variable(harness: &Harness, scope: i64, name: &str) -> Option<serde_json::Value> {
    harness
        .records()
        .events()
        .with_value_type(ValueType::Variable)
        .values::<VariableRecord>()
        .into_iter()
        .rev()
        .find(|v| v.scope_key == scope && v.name == name)
        .map(|v| json(v.value.as_bytes()))
}

/// The key of the body of `element` (its MULTI_INSTANCE_BODY instance).
fn body_key(harness: &Harness, element: &str) -> i64 {
    harness
        .records()
        .with_element(element)
        .with_intent(PI::ElementActivating)
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.bpmn_element_type == "MULTI_INSTANCE_BODY")
        })
        .expect_one()
        .key
}

/// Completes the job of the inner instance whose `item` is `item`, with `variables`.
fn complete_job_of_item(harness: &Harness, jobs: &[(i64, JobRecord)], item: i64, variables: &str) {
    let (key, _) = jobs
        .iter()
        .find(|(_, job)| json(&job.variables)["item"] == item)
        .unwrap_or_else(|| panic!("no job for item {item}"));
    let completed = harness.complete_job(*key, variables).unwrap();
    assert_eq!(completed.record_type, RecordType::Event);
}

#[test]
fn a_parallel_multi_instance_task_runs_an_inner_instance_per_item_in_zeebes_order() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(false, None));
    let instance = harness.create_instance("p", r#"{"items": [10, 20, 30]}"#);
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ACTIVATE_ELEMENT MULTI_INSTANCE_BODY task",
        "PROCESS_INSTANCE ELEMENT_ACTIVATING MULTI_INSTANCE_BODY task",
        "MULTI_INSTANCE INPUT_COLLECTION_EVALUATED",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED MULTI_INSTANCE_BODY task",
        "VARIABLE CREATED results",
        "PROCESS_INSTANCE_BATCH ACTIVATE",
        "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK task",
        "PROCESS_INSTANCE_BATCH ACTIVATE",
        "PROCESS_INSTANCE ELEMENT_ACTIVATING SERVICE_TASK task",
        "VARIABLE CREATED item",
        "VARIABLE CREATED result",
        "VARIABLE CREATED loopCounter",
        "JOB CREATED",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED SERVICE_TASK task",
        "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK task",
        "PROCESS_INSTANCE_BATCH ACTIVATE",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED SERVICE_TASK task",
        "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK task",
        "PROCESS_INSTANCE_BATCH ACTIVATED",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED SERVICE_TASK task",
    ]);
    let body = body_key(&harness, "task");
    let evaluated = harness
        .records()
        .with_intent(MultiInstanceIntent::InputCollectionEvaluated)
        .expect_one();
    assert_eq!(evaluated.key, body);
    assert_eq!(
        evaluated
            .value_as::<MultiInstanceRecord>()
            .unwrap()
            .input_collection,
        vec!["10", "20", "30"]
    );
    assert_eq!(
        variable(&harness, body, "results"),
        Some(serde_json::json!([null, null, null]))
    );

    // Each inner instance is a child of the body, with its item and loop counter as locals.
    let inner: Vec<ProcessInstanceRecord> = harness
        .records()
        .with_intent(PI::ElementActivated)
        .with_element("task")
        .values::<ProcessInstanceRecord>()
        .into_iter()
        .filter(|v| v.bpmn_element_type == "SERVICE_TASK")
        .collect();
    assert_eq!(inner.len(), 3);
    assert!(inner.iter().all(|v| v.flow_scope_key == body));
    let jobs = harness.activate_jobs("w", 10);
    assert_eq!(jobs.len(), 3);
    let mut seen: Vec<(i64, i64)> = jobs
        .iter()
        .map(|(_, job)| {
            let variables = json(&job.variables);
            (
                variables["item"].as_i64().unwrap(),
                variables["loopCounter"].as_i64().unwrap(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(seen, vec![(10, 1), (20, 2), (30, 3)]);

    // Completed in reverse: each result still lands at its item's place.
    for item in [30, 10, 20] {
        complete_job_of_item(
            &harness,
            &jobs,
            item,
            &format!(r#"{{"result": {}}}"#, item * 2),
        );
    }
    harness
        .records()
        .of_instance(instance)
        .expect_subsequence(&[
            "PROCESS_INSTANCE ELEMENT_COMPLETING SERVICE_TASK task",
            "VARIABLE UPDATED results",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE COMPLETE_ELEMENT MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_COMPLETING MULTI_INSTANCE_BODY task",
            "VARIABLE CREATED results",
            "PROCESS_INSTANCE ELEMENT_COMPLETED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE SEQUENCE_FLOW_TAKEN SEQUENCE_FLOW flow_task_end_1",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ]);
    assert_eq!(
        variable(&harness, instance, "results"),
        Some(serde_json::json!([20, 40, 60]))
    );
    // The workers' results stay in their inner instances (the output element created them
    // there), the loop variables too: nothing else reached the process.
    let at_process: Vec<String> = harness
        .records()
        .with_intent(VariableIntent::Created)
        .values::<VariableRecord>()
        .into_iter()
        .filter(|v| v.scope_key == instance)
        .map(|v| v.name)
        .collect();
    assert_eq!(at_process, vec!["items", "results"]);
}

#[test]
fn a_sequential_multi_instance_task_starts_the_next_item_when_one_completes() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(true, None));
    let instance = harness.create_instance("p", r#"{"items": ["a", "b", "c"]}"#);
    for (loop_counter, item) in [(1, "a"), (2, "b"), (3, "c")] {
        let jobs = harness.activate_jobs("w", 10);
        assert_eq!(jobs.len(), 1, "one inner instance at a time");
        let variables = json(&jobs[0].1.variables);
        assert_eq!(
            (
                variables["item"].as_str(),
                variables["loopCounter"].as_i64()
            ),
            (Some(item), Some(loop_counter))
        );
        harness
            .complete_job(jobs[0].0, &format!(r#"{{"result": "{item}!"}}"#))
            .unwrap();
    }
    assert!(harness.activate_jobs("w", 10).is_empty());
    harness
        .records()
        .with_value_type(ValueType::ProcessInstanceBatch)
        .expect_none();
    harness
        .records()
        .of_instance(instance)
        .expect_subsequence(&[
            "PROCESS_INSTANCE ELEMENT_ACTIVATED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ]);
    assert_eq!(
        variable(&harness, instance, "results"),
        Some(serde_json::json!(["a!", "b!", "c!"]))
    );
}

#[test]
fn a_fulfilled_completion_condition_terminates_the_other_inner_instances() {
    let harness = Harness::new(1);
    // True exactly when the second of three completes: the counts are Zeebe's, seen while an
    // inner instance completes (it counts as completed, no longer as active).
    harness.deploy_process(&items_process(
        false,
        Some("= numberOfCompletedInstances = 2 and numberOfActiveInstances = 1 and numberOfInstances = 3 and numberOfTerminatedInstances = 0"),
    ));
    let instance = harness.create_instance("p", r#"{"items": [1, 2, 3]}"#);
    let jobs = harness.activate_jobs("w", 10);
    complete_job_of_item(&harness, &jobs, 1, r#"{"result": "one"}"#);
    harness
        .records()
        .with_intent(PI::ElementTerminating)
        .expect_none();
    complete_job_of_item(&harness, &jobs, 3, r#"{"result": "three"}"#);
    harness
        .records()
        .of_instance(instance)
        .expect_subsequence(&[
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE_BATCH TERMINATE",
            "PROCESS_INSTANCE TERMINATE_ELEMENT SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SERVICE_TASK task",
            "JOB CANCELED",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE COMPLETE_ELEMENT MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ]);
    harness
        .records()
        .with_intent(JobIntent::Canceled)
        .expect_one();
    assert_eq!(
        variable(&harness, instance, "results"),
        Some(serde_json::json!(["one", null, "three"])),
        "the terminated instance leaves its place empty"
    );
}

#[test]
fn a_sequential_body_with_a_fulfilled_condition_starts_no_more_items() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(true, Some(r#"= result = "found""#)));
    let instance = harness.create_instance("p", r#"{"items": [1, 2, 3]}"#);
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, r#"{"result": "no"}"#).unwrap();
    let (job, _) = harness.activate_job("w");
    harness.complete_job(job, r#"{"result": "found"}"#).unwrap();
    assert!(harness.activate_jobs("w", 10).is_empty());
    harness
        .records()
        .of_instance(instance)
        .with_intent(PI::ElementCompleted)
        .with_element("p")
        .expect_one();
    assert_eq!(
        variable(&harness, instance, "results"),
        Some(serde_json::json!(["no", "found", null]))
    );
}

#[test]
fn an_empty_collection_completes_the_body_at_once_with_an_empty_output() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(false, None));
    let instance = harness.create_instance("p", r#"{"items": []}"#);
    assert_eq!(
        harness.records().of_instance(instance).lifecycle(),
        crate::steps(&[
            ("p", PI::ElementActivating),
            ("p", PI::ElementActivated),
            ("start", PI::ElementActivating),
            ("start", PI::ElementActivated),
            ("start", PI::ElementCompleting),
            ("start", PI::ElementCompleted),
            ("flow_start_task_0", PI::SequenceFlowTaken),
            ("task", PI::ElementActivating),
            ("task", PI::ElementActivated),
            ("task", PI::ElementCompleting),
            ("task", PI::ElementCompleted),
            ("flow_task_end_1", PI::SequenceFlowTaken),
            ("end", PI::ElementActivating),
            ("end", PI::ElementActivated),
            ("end", PI::ElementCompleting),
            ("end", PI::ElementCompleted),
            ("p", PI::ElementCompleting),
            ("p", PI::ElementCompleted),
        ])
    );
    assert_eq!(
        variable(&harness, instance, "results"),
        Some(serde_json::json!([]))
    );
    harness
        .records()
        .with_intent(JobIntent::Created)
        .expect_none();
}

#[test]
fn an_input_collection_that_is_no_list_is_an_incident_and_resolving_it_goes_on() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(false, None));
    let instance = harness.create_instance("p", r#"{"items": "not a list"}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert_eq!(
        value.error_message,
        "Expected result of the expression 'items' to be 'ARRAY', but was 'STRING'."
    );
    let body = body_key(&harness, "task");
    assert_eq!(value.element_instance_key, body);
    harness
        .records()
        .with_key(body)
        .with_intent(PI::ElementActivated)
        .expect_none();

    harness
        .set_variables(instance, r#"{"items": [7]}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    let (_, job) = harness.activate_job("w");
    assert_eq!(json(&job.variables)["item"], 7);
}

#[test]
fn a_missing_input_collection_names_the_variable_in_the_incident() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(false, None));
    harness.create_instance("p", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let message = &incident.value_as::<IncidentRecord>().unwrap().error_message;
    assert!(
        message.starts_with(
            "Expected result of the expression 'items' to be 'ARRAY', but was 'NULL'."
        ) && message.contains("'items'"),
        "{message}"
    );
}

#[test]
fn an_interrupting_boundary_event_on_the_body_terminates_every_inner_instance() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &items_process(false, None)
            .boundary_event("timeout", "task", &timer("timeDuration", "PT1M"), true)
            .end_event("timed-out"),
    );
    let instance = harness.create_instance("p", r#"{"items": [1, 2, 3]}"#);
    let body = body_key(&harness, "task");
    // The timer belongs to the body, not to each inner instance.
    let timers = harness
        .records()
        .with_intent(beeline_protocol::intent::TimerIntent::Created)
        .values::<beeline_protocol::value::TimerRecord>();
    assert_eq!(timers.len(), 1);
    assert_eq!(timers[0].element_instance_key, body);

    harness.advance_time(60_000);
    harness
        .records()
        .of_instance(instance)
        .expect_subsequence(&[
            "PROCESS_INSTANCE ELEMENT_TERMINATING MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE_BATCH TERMINATE",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_ACTIVATING BOUNDARY_EVENT timeout",
            "PROCESS_INSTANCE ELEMENT_COMPLETED END_EVENT timed-out",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ]);
    harness
        .records()
        .with_intent(JobIntent::Canceled)
        .expect_count(3);
    assert_eq!(
        variable(&harness, instance, "results"),
        None,
        "a terminated body hands no output collection on"
    );
}

#[test]
fn a_non_interrupting_boundary_event_on_the_body_leaves_the_inner_instances_alone() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &items_process(false, None)
            .boundary_event("remind", "task", &timer("timeDuration", "PT1M"), false)
            .service_task("reminder", "remind"),
    );
    let instance = harness.create_instance("p", r#"{"items": [1, 2]}"#);
    harness.advance_time(60_000);
    harness.activate_job("remind");
    harness
        .records()
        .with_intent(PI::ElementTerminating)
        .expect_none();
    let jobs = harness.activate_jobs("w", 10);
    assert_eq!(jobs.len(), 2);
    for (key, _) in jobs {
        harness.complete_job(key, r#"{"result": 1}"#).unwrap();
    }
    harness
        .records()
        .of_instance(instance)
        .with_intent(PI::ElementCompleted)
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.bpmn_element_type == "MULTI_INSTANCE_BODY")
        })
        .expect_one();
}

#[test]
fn an_error_thrown_by_an_inner_job_is_caught_by_the_boundary_event_of_the_body() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &items_process(false, None)
            .root(r#"<bpmn:error id="err" errorCode="FAILED"/>"#)
            .boundary_event(
                "on-error",
                "task",
                r#"<bpmn:errorEventDefinition errorRef="err"/>"#,
                true,
            )
            .end_event("failed"),
    );
    let instance = harness.create_instance("p", r#"{"items": [1, 2]}"#);
    let jobs = harness.activate_jobs("w", 10);
    harness.throw_error(jobs[0].0, "FAILED", "no").unwrap();
    harness
        .records()
        .of_instance(instance)
        .expect_subsequence(&[
            "PROCESS_INSTANCE ELEMENT_TERMINATING MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED BOUNDARY_EVENT on-error",
            "PROCESS_INSTANCE ELEMENT_COMPLETED END_EVENT failed",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ]);
    harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_none();
}

#[test]
fn a_multi_instance_sub_process_runs_its_flow_once_per_item() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .sub_process("sub")
            .start_event("sub-start")
            .service_task("work", "w")
            .end_event("sub-end")
            .end_sub_process()
            .multi_instance(
                "sub",
                false,
                r#"inputCollection="= orders" inputElement="order" outputCollection="totals" outputElement="= total""#,
                None,
            )
            .end_event("end"),
    );
    let instance = harness.create_instance("p", r#"{"orders": [{"id": "a"}, {"id": "b"}]}"#);
    let jobs = harness.activate_jobs("w", 10);
    assert_eq!(jobs.len(), 2);
    let body = body_key(&harness, "sub");
    let inner: Vec<i64> = harness
        .records()
        .with_element("sub")
        .with_intent(PI::ElementActivated)
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.bpmn_element_type == "SUB_PROCESS" && v.flow_scope_key == body)
        })
        .list()
        .iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(inner.len(), 2);
    for (key, job) in &jobs {
        let order = json(&job.variables)["order"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let total = if order == "a" { 5 } else { 7 };
        harness
            .complete_job(*key, &format!(r#"{{"total": {total}}}"#))
            .unwrap();
    }
    assert_eq!(
        variable(&harness, instance, "totals"),
        Some(serde_json::json!([5, 7]))
    );
    harness
        .records()
        .of_instance(instance)
        .with_intent(PI::ElementCompleted)
        .with_element("p")
        .expect_one();
}

#[test]
fn cancelling_the_instance_terminates_the_body_and_its_inner_instances() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(false, None));
    let instance = harness.create_instance("p", r#"{"items": [1, 2, 3]}"#);
    harness.cancel_instance(instance).unwrap();
    harness
        .records()
        .of_instance(instance)
        .expect_subsequence(&[
            "PROCESS_INSTANCE ELEMENT_TERMINATING PROCESS p",
            "PROCESS_INSTANCE_BATCH TERMINATE",
            "PROCESS_INSTANCE ELEMENT_TERMINATING MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE_BATCH TERMINATE",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS p",
        ]);
    harness
        .records()
        .with_intent(JobIntent::Canceled)
        .expect_count(3);
    assert!(harness.activate_jobs("w", 10).is_empty());
}

#[test]
fn a_completion_condition_that_fails_is_an_incident_on_the_inner_instance() {
    let harness = Harness::new(1);
    harness.deploy_process(&items_process(false, Some("=done")));
    let instance = harness.create_instance("p", r#"{"items": [1, 2]}"#);
    let jobs = harness.activate_jobs("w", 10);
    complete_job_of_item(&harness, &jobs, 1, r#"{"result": 1}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert!(
        value.error_message.starts_with(
            "Expected result of the expression 'done' to be 'BOOLEAN', but was 'NULL'."
        ),
        "{}",
        value.error_message
    );
    let inner = harness
        .records()
        .with_key(value.element_instance_key)
        .list()[0]
        .value_as::<ProcessInstanceRecord>()
        .unwrap()
        .bpmn_element_type
        .clone();
    assert_eq!(inner, "SERVICE_TASK");
    harness
        .records()
        .with_key(value.element_instance_key)
        .with_intent(PI::ElementCompleted)
        .expect_none();

    harness
        .set_variables(instance, r#"{"done": true}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    harness
        .records()
        .of_instance(instance)
        .expect_subsequence(&[
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED MULTI_INSTANCE_BODY task",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ]);
}

#[test]
fn a_multi_instance_activity_without_input_collection_is_refused_naming_it() {
    let harness = Harness::new(1);
    let refused = harness
        .deploy(
            "mi.bpmn",
            &ProcessBuilder::new("p")
                .start_event("start")
                .service_task("task", "w")
                .multi_instance("task", false, r#"inputElement="item""#, None)
                .end_event("end")
                .build(),
        )
        .unwrap();
    assert_eq!(refused.rejection_type, RejectionType::InvalidArgument);
    assert!(
        refused.rejection_reason.contains("Element: task")
            && refused
                .rejection_reason
                .contains("Attribute 'inputCollection' must be present and not empty"),
        "{}",
        refused.rejection_reason
    );
}

#[test]
fn ten_thousand_items_run_in_batches_that_never_exceed_the_batch_size() {
    const MAX_BATCH_BYTES: usize = 256 * 1024;
    let harness = Harness::with_config(1, |config| config.max_batch_bytes = MAX_BATCH_BYTES);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .task("each")
            .multi_instance(
                "each",
                false,
                r#"inputCollection="= for i in 1..10000 return i" inputElement="item""#,
                None,
            )
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    let records = harness.records();
    records.clone().rejections().expect_none();
    records
        .clone()
        .of_instance(instance)
        .with_intent(PI::ElementCompleted)
        .with_element("p")
        .expect_one();
    let inner_completed = records
        .clone()
        .with_intent(PI::ElementCompleted)
        .with_element("each")
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.bpmn_element_type == "TASK")
        })
        .len();
    assert_eq!(inner_completed, 10_000);
    // Every batch (the results of one command, one log entry) stays within the limit.
    let mut batches: BTreeMap<i64, (usize, usize)> = BTreeMap::new();
    for record in records.list() {
        if record.source_record_position >= 0 {
            let entry = batches.entry(record.source_record_position).or_default();
            entry.0 += 1;
            entry.1 += beeline_protocol::codec::encoded_len(record);
        }
    }
    let (largest_count, largest_bytes) = batches.values().fold((0, 0), |(c, b), (count, bytes)| {
        (c.max(*count), b.max(*bytes))
    });
    assert!(
        batches.len() > 100,
        "the items ran in many batches: {}",
        batches.len()
    );
    assert!(
        largest_bytes <= MAX_BATCH_BYTES,
        "a batch took {largest_bytes} bytes"
    );
    assert!(
        largest_count <= 1_100,
        "a batch held {largest_count} records"
    );
    let loop_counters: Vec<i64> = records
        .clone()
        .with_intent(VariableIntent::Created)
        .values::<VariableRecord>()
        .into_iter()
        .filter(|v| v.name == "loopCounter")
        .map(|v| v.value.parse().unwrap())
        .collect();
    assert_eq!(loop_counters, (1..=10_000).collect::<Vec<_>>());
}

#[test]
fn each_inner_instance_of_a_receive_task_waits_for_its_own_message() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .message("answer", Some("=item"))
            .start_event("start")
            .receive_task("wait", "answer")
            .multi_instance(
                "wait",
                false,
                r#"inputCollection="=ids" inputElement="item" outputCollection="answers" outputElement="=value""#,
                None,
            )
            .end_event("end"),
    );
    let instance = harness.create_instance("p", r#"{"ids": ["a", "b"]}"#);
    let subscriptions = harness
        .records()
        .with_intent(beeline_protocol::intent::ProcessMessageSubscriptionIntent::Creating)
        .values::<beeline_protocol::value::ProcessMessageSubscriptionRecord>();
    let mut keys: Vec<&str> = subscriptions
        .iter()
        .map(|s| s.correlation_key.as_str())
        .collect();
    keys.sort();
    assert_eq!(keys, vec!["a", "b"], "one subscription per inner instance");
    harness
        .publish_message("answer", "b", 0, "", r#"{"value": "B"}"#)
        .unwrap();
    harness
        .publish_message("answer", "a", 0, "", r#"{"value": "A"}"#)
        .unwrap();
    harness.settle();
    assert_eq!(
        variable(&harness, instance, "answers"),
        Some(serde_json::json!(["A", "B"]))
    );
}

#[test]
fn input_and_output_mappings_apply_to_each_inner_instance() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .service_task_with(
                "task",
                "w",
                r#"<zeebe:ioMapping><zeebe:input source="=item * 10" target="scaled"/><zeebe:output source="=scaled + 1" target="last"/></zeebe:ioMapping>"#,
            )
            .multi_instance("task", true, r#"inputCollection="=[1, 2]" inputElement="item""#, None)
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    for expected in [10, 20] {
        let (key, job) = harness.activate_job("w");
        assert_eq!(json(&job.variables)["scaled"], expected);
        harness.complete_job(key, "{}").unwrap();
    }
    // Each inner instance's output mapping set `last` where it exists or in the process.
    assert_eq!(
        variable(&harness, instance, "last"),
        Some(serde_json::json!(21))
    );
}
