use beeline_protocol::intent::{
    JobIntent, ProcessInstanceCreationIntent, ProcessInstanceIntent as PI,
};
use beeline_protocol::value::{ProcessInstanceCreationRecord, ProcessInstanceResultRecord};
use beeline_protocol::{RecordType, RejectionType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

use crate::{json, steps};

#[test]
fn a_process_from_start_to_end_follows_zeebes_lifecycle() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .manual_task("manual")
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    let records = harness
        .records()
        .of_instance(instance)
        .with_value_type(beeline_protocol::ValueType::ProcessInstance);
    assert_eq!(
        records.clone().events().lifecycle(),
        steps(&[
            ("p", PI::ElementActivating),
            ("p", PI::ElementActivated),
            ("start", PI::ElementActivating),
            ("start", PI::ElementActivated),
            ("start", PI::ElementCompleting),
            ("start", PI::ElementCompleted),
            ("flow_start_manual_0", PI::SequenceFlowTaken),
            ("manual", PI::ElementActivating),
            ("manual", PI::ElementActivated),
            ("manual", PI::ElementCompleting),
            ("manual", PI::ElementCompleted),
            ("flow_manual_end_1", PI::SequenceFlowTaken),
            ("end", PI::ElementActivating),
            ("end", PI::ElementActivated),
            ("end", PI::ElementCompleting),
            ("end", PI::ElementCompleted),
            ("p", PI::ElementCompleting),
            ("p", PI::ElementCompleted),
        ]),
        "{}",
        records.log()
    );
    // The whole instance ran in the batch of its creation command: one append.
    let creation = harness
        .records()
        .with_intent(ProcessInstanceCreationIntent::Create)
        .expect_one();
    let last = records.list().last().unwrap();
    assert_eq!(last.source_record_position, creation.position);
    // Element records carry Zeebe's types.
    let start = harness
        .records()
        .with_element("start")
        .with_intent(PI::ElementActivated)
        .expect_one();
    let value = start
        .value_as::<beeline_protocol::value::ProcessInstanceRecord>()
        .unwrap();
    assert_eq!(
        (
            value.bpmn_element_type.as_str(),
            value.bpmn_event_type.as_str()
        ),
        ("START_EVENT", "NONE")
    );
    assert_eq!(value.flow_scope_key, instance);
}

#[test]
fn creation_by_definition_key_and_version_and_unknown_processes() {
    let harness = Harness::new(1);
    let first = harness.deploy_process(&ProcessBuilder::new("p").start_event("s").end_event("e"));
    let key1 = first
        .value_as::<beeline_protocol::value::DeploymentRecord>()
        .unwrap()
        .processes_metadata[0]
        .process_definition_key;
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .task("t")
            .end_event("e"),
    );
    let by_key = harness
        .execute(beeline_protocol::Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            ProcessInstanceCreationRecord {
                process_definition_key: key1,
                ..Default::default()
            },
        ))
        .unwrap();
    assert_eq!(
        by_key
            .value_as::<ProcessInstanceCreationRecord>()
            .unwrap()
            .version,
        1
    );
    let latest = harness.try_create_instance("p", "{}").unwrap();
    assert_eq!(
        latest
            .value_as::<ProcessInstanceCreationRecord>()
            .unwrap()
            .version,
        2
    );
    let missing = harness.try_create_instance("nope", "{}").unwrap();
    assert_eq!(missing.rejection_type, RejectionType::NotFound);
    assert_eq!(
        missing.rejection_reason,
        "Expected to find process definition with process ID 'nope', but none found"
    );
    let bad_variables = harness.try_create_instance("p", "[1, 2]").unwrap();
    assert_eq!(bad_variables.rejection_type, RejectionType::InvalidArgument);
}

#[test]
fn creation_with_result_answers_when_the_instance_completes() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("work", "w")
            .end_event("e"),
    );
    let mut pending = harness.create_instance_with_result("p", r#"{"a":1,"b":2}"#, &["a", "c"]);
    let (job, _) = harness.activate_job("w");
    assert!(
        pending.try_take().is_none(),
        "no answer before the instance completes"
    );
    harness.complete_job(job, r#"{"c":3}"#).unwrap();
    let answer = pending.wait(&harness).unwrap();
    assert_eq!(
        answer.intent,
        beeline_protocol::intent::ProcessInstanceResultIntent::Completed.into()
    );
    let result = answer.value_as::<ProcessInstanceResultRecord>().unwrap();
    assert_eq!(json(&result.variables), serde_json::json!({"a": 1, "c": 3}));
}

#[test]
fn canceling_terminates_every_active_element_and_job() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .parallel_gateway("fork")
            .service_task("a", "work")
            .end_event("ea")
            .move_to("fork")
            .sub_process("sub")
            .start_event("inner_start")
            .service_task("b", "work")
            .end_event("inner_end")
            .end_sub_process()
            .end_event("eb"),
    );
    let instance = harness.create_instance("p", "{}");
    harness.activate_jobs("work", 10);
    let canceled = harness.cancel_instance(instance).unwrap();
    assert_eq!(canceled.intent, PI::Canceling.into());
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_intent(JobIntent::Canceled)
        .expect_count(2);
    let terminated: Vec<String> = records
        .clone()
        .with_intent(PI::ElementTerminated)
        .lifecycle()
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(
        terminated.len(),
        4,
        "a, b, sub and the process: {terminated:?}\n{}",
        records.log()
    );
    assert_eq!(
        terminated.last().map(String::as_str),
        Some("p"),
        "the process terminates last"
    );
    assert!(
        harness.activate_jobs("work", 10).is_empty(),
        "no job is left"
    );
    let again = harness.cancel_instance(instance).unwrap();
    assert_eq!(again.rejection_type, RejectionType::NotFound);
}

#[test]
fn an_embedded_sub_process_runs_in_its_own_scope() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .sub_process("sub")
            .start_event("in_s")
            .task("in_t")
            .end_event("in_e")
            .end_sub_process()
            .end_event("e"),
    );
    let instance = harness.create_instance("p", "{}");
    let records = harness.records().of_instance(instance);
    let sub = records
        .clone()
        .with_element("sub")
        .with_intent(PI::ElementActivated)
        .expect_one();
    let inner = records
        .clone()
        .with_element("in_t")
        .with_intent(PI::ElementActivated)
        .expect_one();
    let inner_value = inner
        .value_as::<beeline_protocol::value::ProcessInstanceRecord>()
        .unwrap();
    assert_eq!(
        inner_value.flow_scope_key, sub.key,
        "children of the sub-process are in its scope"
    );
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    let order: Vec<String> = records
        .clone()
        .with_intent(PI::ElementCompleted)
        .lifecycle()
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(order, vec!["s", "in_s", "in_t", "in_e", "sub", "e", "p"]);
}

#[test]
fn a_terminate_end_event_ends_its_scope_with_everything_in_it() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .parallel_gateway("fork")
            .service_task("wait", "never")
            .end_event("e1")
            .move_to("fork")
            .terminate_end_event("stop"),
    );
    let instance = harness.create_instance("p", "{}");
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("wait")
        .with_intent(PI::ElementTerminated)
        .expect_one();
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    records
        .clone()
        .with_intent(JobIntent::Canceled)
        .expect_one();
    assert!(harness.activate_jobs("never", 1).is_empty());
}

#[test]
fn start_instructions_start_the_instance_at_the_given_elements() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("first", "one")
            .service_task("second", "two")
            .end_event("e"),
    );
    let created = harness
        .execute(beeline_protocol::Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            ProcessInstanceCreationRecord {
                bpmn_process_id: "p".into(),
                version: -1,
                start_instructions: vec![beeline_protocol::value::StartInstruction {
                    element_id: "second".into(),
                }],
                ..Default::default()
            },
        ))
        .unwrap();
    assert_eq!(
        created.record_type,
        RecordType::Event,
        "{}",
        created.rejection_reason
    );
    assert!(
        harness.activate_jobs("one", 1).is_empty(),
        "the first task was skipped"
    );
    let (job, _) = harness.activate_job("two");
    harness.complete_job(job, "{}").unwrap();
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness.records().with_element("s").expect_none();
}

#[test]
fn a_script_task_sets_its_result_variable() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .script_task("calc", "=a + b", "sum")
            .service_task("check", "check")
            .end_event("e"),
    );
    harness.create_instance("p", r#"{"a": 2, "b": 40}"#);
    let (_, job) = harness.activate_job("check");
    assert_eq!(json(&job.variables)["sum"], serde_json::json!(42));
}
