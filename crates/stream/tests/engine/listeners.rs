//! Execution listeners: jobs of kind EXECUTION_LISTENER that run one after another after an
//! element's input mappings (start) and after its output mappings (end), with the element
//! waiting in ELEMENT_ACTIVATING or ELEMENT_COMPLETING; their variables, incidents and
//! cancellation.

use beeline_protocol::intent::{IncidentIntent, JobIntent, ProcessInstanceIntent as PI};
use beeline_protocol::value::{IncidentRecord, JobRecord, ProcessInstanceRecord, VariableRecord};
use beeline_protocol::{Record, RecordType, RejectionType, ValueType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, message_ref};

/// `<zeebe:executionListeners>` with `(eventType, type)` listeners.
fn listeners(listeners: &[(&str, &str)]) -> String {
    let inner: String = listeners
        .iter()
        .map(|(event, job_type)| {
            format!(
                r#"<zeebe:executionListener eventType="{event}" type="{}" retries="2"/>"#,
                job_type.replace('"', "&quot;")
            )
        })
        .collect();
    format!("<zeebe:executionListeners>{inner}</zeebe:executionListeners>")
}

/// The steps of the log, with a job's type after its intent (`"JOB CREATED start-1"`; not
/// on commands, which carry none).
fn steps(harness: &Harness) -> Vec<String> {
    let records = harness.records();
    let all = records.list();
    records
        .steps()
        .into_iter()
        .zip(all)
        .map(|(step, record)| match record.value_as::<JobRecord>() {
            Some(job) if !job.r#type.is_empty() => format!("{step} {}", job.r#type),
            Some(_) => step,
            None => step,
        })
        .collect()
}

/// `expected` appear in the steps in this order.
fn expect_steps(harness: &Harness, expected: &[&str]) {
    let steps = steps(harness);
    let mut next = 0;
    for step in &steps {
        if next < expected.len() && step == expected[next] {
            next += 1;
        }
    }
    assert!(
        next == expected.len(),
        "expected {:?} (after {:?}); the steps were:\n{}",
        expected.get(next),
        next.checked_sub(1).map(|i| expected[i]),
        steps.join("\n")
    );
}

fn variable(harness: &Harness, name: &str) -> VariableRecord {
    harness
        .records()
        .with_value_type(ValueType::Variable)
        .matching(|r| {
            r.value_as::<VariableRecord>()
                .is_some_and(|v| v.name == name)
        })
        .expect_one()
        .value_as::<VariableRecord>()
        .unwrap()
        .clone()
}

fn element_key(harness: &Harness, element: &str) -> i64 {
    harness
        .records()
        .with_element(element)
        .with_intent(PI::ElementActivating)
        .expect_one()
        .key
}

fn expect_event(answer: Record) {
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{} {}",
        answer.rejection_type.name(),
        answer.rejection_reason
    );
}

#[test]
fn start_and_end_listeners_run_around_a_service_task_in_zeebes_order() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .service_task_with(
                "task",
                "work",
                &listeners(&[("start", "start-1"), ("start", "start-2"), ("end", "end-1")]),
            )
            .end_event("end"),
    );
    let instance = harness.create_instance("p", r#"{"order": 7}"#);
    let task = element_key(&harness, "task");

    let (start_1, job) = harness.activate_job("start-1");
    assert_eq!(job.job_kind, "EXECUTION_LISTENER");
    assert_eq!(job.job_listener_event_type, "START");
    assert_eq!(job.retries, 2);
    assert_eq!(job.element_instance_key, task);
    assert_eq!(job.element_id, "task");
    assert_eq!(crate::json(&job.variables)["order"], 7);
    harness
        .records()
        .with_element("task")
        .with_intent(PI::ElementActivated)
        .expect_none();
    assert!(
        harness.activate_jobs("start-2", 1).is_empty(),
        "one at a time"
    );

    expect_event(
        harness
            .complete_job(start_1, r#"{"prepared": true}"#)
            .unwrap(),
    );
    let (start_2, job) = harness.activate_job("start-2");
    assert_eq!(
        crate::json(&job.variables)["prepared"],
        true,
        "later listeners see the variables of earlier ones"
    );
    expect_event(harness.complete_job(start_2, "{}").unwrap());
    let (work, _) = harness.activate_job("work");
    expect_event(harness.complete_job(work, r#"{"result": 1}"#).unwrap());
    let (end_1, job) = harness.activate_job("end-1");
    assert_eq!(job.job_listener_event_type, "END");
    assert_eq!(crate::json(&job.variables)["result"], 1);
    harness
        .records()
        .with_element("task")
        .with_intent(PI::ElementCompleted)
        .expect_none();
    expect_event(
        harness
            .complete_job(end_1, r#"{"audited": "yes"}"#)
            .unwrap(),
    );

    expect_steps(
        &harness,
        &[
            "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_ACTIVATING SERVICE_TASK task",
            "JOB CREATED start-1",
            "JOB COMPLETE",
            "JOB COMPLETED start-1",
            "PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER SERVICE_TASK task",
            "VARIABLE CREATED prepared",
            "JOB CREATED start-2",
            "JOB COMPLETED start-2",
            "PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER SERVICE_TASK task",
            "JOB CREATED work",
            "PROCESS_INSTANCE ELEMENT_ACTIVATED SERVICE_TASK task",
            "JOB COMPLETED work",
            "PROCESS_INSTANCE COMPLETE_ELEMENT SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_COMPLETING SERVICE_TASK task",
            "VARIABLE CREATED result",
            "JOB CREATED end-1",
            "JOB COMPLETED end-1",
            "PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER SERVICE_TASK task",
            "VARIABLE CREATED audited",
            "PROCESS_INSTANCE ELEMENT_COMPLETED SERVICE_TASK task",
            "PROCESS_INSTANCE SEQUENCE_FLOW_TAKEN SEQUENCE_FLOW flow_task_end_1",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ],
    );
    assert_eq!(
        variable(&harness, "prepared").scope_key,
        task,
        "a start listener's variables are locals of the element"
    );
    assert_eq!(
        variable(&harness, "audited").scope_key,
        instance,
        "an end listener's variables go to the flow scope"
    );
    let jobs = harness
        .records()
        .with_intent(JobIntent::Created)
        .values::<JobRecord>();
    let kinds: Vec<(&str, &str, &str)> = jobs
        .iter()
        .map(|j| {
            (
                j.r#type.as_str(),
                j.job_kind.as_str(),
                j.job_listener_event_type.as_str(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("start-1", "EXECUTION_LISTENER", "START"),
            ("start-2", "EXECUTION_LISTENER", "START"),
            ("work", "BPMN_ELEMENT", "UNSPECIFIED"),
            ("end-1", "EXECUTION_LISTENER", "END"),
        ]
    );
}

#[test]
fn a_start_listener_sets_what_the_elements_own_expressions_read() {
    // The gateway's conditions and the task's job type read what their listeners set.
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .exclusive_gateway("route")
            .condition("= lane = \"fast\"")
            .service_task("fast", "= worker")
            .end_event("fast-end")
            .move_to("route")
            .default_flow()
            .service_task("slow", "slow-work")
            .end_event("slow-end")
            .extension("route", &listeners(&[("start", "decide")]))
            .extension("fast", &listeners(&[("start", "name-worker")])),
    );
    harness.create_instance("p", "{}");
    let (decide, _) = harness.activate_job("decide");
    expect_event(harness.complete_job(decide, r#"{"lane": "fast"}"#).unwrap());
    let (name, _) = harness.activate_job("name-worker");
    expect_event(
        harness
            .complete_job(name, r#"{"worker": "fast-work"}"#)
            .unwrap(),
    );
    let (work, job) = harness.activate_job("fast-work");
    assert_eq!(
        crate::json(&job.variables).get("lane"),
        None,
        "the gateway's locals went with it"
    );
    expect_event(harness.complete_job(work, "{}").unwrap());
    harness.records().with_element("slow").expect_none();
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn listeners_on_the_process_run_before_its_start_event_and_after_its_last_element() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .end_event("end")
            .extension("p", &listeners(&[("start", "p-start"), ("end", "p-end")])),
    );
    let instance = harness.create_instance("p", "{}");
    harness
        .records()
        .with_element("start")
        .with_intent(PI::ElementActivating)
        .expect_none();
    let (start, job) = harness.activate_job("p-start");
    assert_eq!(job.element_instance_key, instance);
    assert_eq!(job.element_id, "p");
    expect_event(harness.complete_job(start, r#"{"opened": 1}"#).unwrap());
    let (end, job) = harness.activate_job("p-end");
    assert_eq!(crate::json(&job.variables)["opened"], 1);
    expect_event(harness.complete_job(end, r#"{"closed": 2}"#).unwrap());
    expect_steps(
        &harness,
        &[
            "PROCESS_INSTANCE ELEMENT_ACTIVATING PROCESS p",
            "JOB CREATED p-start",
            "PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER PROCESS p",
            "VARIABLE CREATED opened",
            "PROCESS_INSTANCE ELEMENT_ACTIVATED PROCESS p",
            "PROCESS_INSTANCE ELEMENT_COMPLETED END_EVENT end",
            "PROCESS_INSTANCE ELEMENT_COMPLETING PROCESS p",
            "JOB CREATED p-end",
            "PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER PROCESS p",
            "VARIABLE CREATED closed",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ],
    );
    assert_eq!(
        variable(&harness, "closed").scope_key,
        instance,
        "the process has no flow scope: its own"
    );
}

#[test]
fn a_listener_out_of_retries_is_an_incident_and_only_that_listener_runs_again() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .service_task_with(
                "task",
                "work",
                &listeners(&[("start", "first"), ("start", "second")]),
            )
            .end_event("end"),
    );
    harness.create_instance("p", "{}");
    let (first, _) = harness.activate_job("first");
    expect_event(harness.complete_job(first, "{}").unwrap());
    let (second, _) = harness.activate_job("second");
    expect_event(harness.fail_job(second, 0, "service down", 0).unwrap());
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "EXECUTION_LISTENER_NO_RETRIES");
    assert_eq!(value.error_message, "service down");
    assert_eq!(value.job_key, second);
    assert_eq!(value.element_id, "task");

    expect_event(harness.update_retries(second, 1).unwrap());
    expect_event(harness.resolve_incident(incident.key).unwrap());
    let (again, _) = harness.activate_job("second");
    assert_eq!(again, second, "the same job comes back");
    expect_event(harness.complete_job(second, "{}").unwrap());
    let (work, _) = harness.activate_job("work");
    expect_event(harness.complete_job(work, "{}").unwrap());
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    assert_eq!(
        harness
            .records()
            .with_intent(JobIntent::Created)
            .values::<JobRecord>()
            .iter()
            .filter(|j| j.r#type == "first")
            .count(),
        1,
        "the listener before it does not run again"
    );
}

#[test]
fn a_listener_whose_type_fails_to_evaluate_is_an_incident_and_its_phase_runs_again() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .service_task_with(
                "task",
                "work",
                &listeners(&[("start", "first"), ("start", "= kind")]),
            )
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    let (first, _) = harness.activate_job("first");
    expect_event(harness.complete_job(first, "{}").unwrap());
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert_eq!(value.job_key, -1);
    assert_eq!(value.element_id, "task");
    assert!(
        value.error_message.contains("kind"),
        "{}",
        value.error_message
    );

    harness
        .set_variables(instance, r#"{"kind": "second"}"#, false)
        .unwrap();
    expect_event(harness.resolve_incident(incident.key).unwrap());
    // All start listeners run again, from the first.
    let (first, _) = harness.activate_job("first");
    expect_event(harness.complete_job(first, "{}").unwrap());
    let (second, job) = harness.activate_job("second");
    assert_eq!(job.job_listener_event_type, "START");
    expect_event(harness.complete_job(second, "{}").unwrap());
    let (work, _) = harness.activate_job("work");
    expect_event(harness.complete_job(work, "{}").unwrap());
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn cancelling_the_instance_cancels_the_listeners_job() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .service_task_with("task", "work", &listeners(&[("start", "prepare")]))
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("prepare");
    harness.cancel_instance(instance).unwrap();
    expect_steps(
        &harness,
        &[
            "PROCESS_INSTANCE ELEMENT_TERMINATING SERVICE_TASK task",
            "JOB CANCELED prepare",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK task",
            "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS p",
        ],
    );
    harness
        .records()
        .with_key(job)
        .with_intent(JobIntent::Canceled)
        .expect_one();
    assert!(
        harness.complete_job(job, "{}").is_err() || {
            harness
                .records()
                .rejections()
                .with_key(job)
                .with_rejection(RejectionType::NotFound)
                .len()
                == 1
        }
    );
}

#[test]
fn a_listener_job_cannot_throw_an_error() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .service_task_with("task", "work", &listeners(&[("start", "prepare")]))
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("prepare");
    let answer = harness.throw_error(job, "oops", "no").unwrap();
    assert_eq!(answer.record_type, RecordType::CommandRejection);
    assert_eq!(answer.rejection_type, RejectionType::InvalidState);
    assert_eq!(
        answer.rejection_reason,
        format!(
            "Cannot throw BPMN error from EXECUTION_LISTENER job with key '{job}', type 'prepare' and processInstanceKey '{instance}'"
        )
    );
    expect_event(harness.complete_job(job, "{}").unwrap());
    harness.activate_job("work");
}

#[test]
fn multi_instance_activities_run_their_listeners_on_each_inner_instance() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .service_task_with(
                "task",
                "work",
                &listeners(&[("start", "before"), ("end", "after")]),
            )
            .multi_instance(
                "task",
                true,
                r#"inputCollection="= [1, 2]" inputElement="item""#,
                None,
            )
            .end_event("end"),
    );
    harness.create_instance("p", "{}");
    let mut owners = Vec::new();
    for item in [1, 2] {
        let (before, job) = harness.activate_job("before");
        assert_eq!(
            crate::json(&job.variables)["item"],
            item,
            "after the body gave the inner instance its item"
        );
        owners.push(job.element_instance_key);
        expect_event(harness.complete_job(before, "{}").unwrap());
        let (work, _) = harness.activate_job("work");
        expect_event(harness.complete_job(work, "{}").unwrap());
        let (after, job) = harness.activate_job("after");
        owners.push(job.element_instance_key);
        expect_event(harness.complete_job(after, "{}").unwrap());
    }
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    let inner: Vec<i64> = harness
        .records()
        .with_element("task")
        .with_intent(PI::ElementActivating)
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.bpmn_element_type == "SERVICE_TASK")
        })
        .list()
        .iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(
        owners,
        vec![inner[0], inner[0], inner[1], inner[1]],
        "each inner instance runs them; the body none"
    );
}

#[test]
fn end_listeners_of_a_sub_process_give_their_variables_to_its_flow_scope() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .sub_process("sub")
            .start_event("sub-start")
            .end_event("sub-end")
            .end_sub_process()
            .end_event("end")
            .extension("sub", &listeners(&[("start", "in"), ("end", "out")]))
            .extension("sub-end", &listeners(&[("end", "leaving")])),
    );
    let instance = harness.create_instance("p", "{}");
    let sub = element_key(&harness, "sub");
    let (job, _) = harness.activate_job("in");
    expect_event(harness.complete_job(job, r#"{"local": 1}"#).unwrap());
    let (job, _) = harness.activate_job("leaving");
    expect_event(harness.complete_job(job, r#"{"left": 1}"#).unwrap());
    let (job, _) = harness.activate_job("out");
    expect_event(harness.complete_job(job, r#"{"outside": 1}"#).unwrap());
    assert_eq!(variable(&harness, "local").scope_key, sub);
    assert_eq!(
        variable(&harness, "left").scope_key,
        sub,
        "the end event's flow scope"
    );
    assert_eq!(variable(&harness, "outside").scope_key, instance);
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn a_catch_event_subscribes_with_the_correlation_key_its_start_listener_set() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .message("paid", Some("= orderId"))
            .start_event("start")
            .catch_event("wait", &message_ref("paid"))
            .end_event("end")
            .extension("wait", &listeners(&[("start", "look-up")])),
    );
    harness.create_instance("p", "{}");
    harness
        .records()
        .with_value_type(ValueType::ProcessMessageSubscription)
        .expect_none();
    let (job, _) = harness.activate_job("look-up");
    expect_event(harness.complete_job(job, r#"{"orderId": "o-1"}"#).unwrap());
    expect_event(harness.publish_message("paid", "o-1", 0, "", "{}").unwrap());
    harness.settle();
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}
