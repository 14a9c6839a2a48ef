//! Process instance modification (activate elements, terminate element instances, all or
//! nothing) and start instructions of new instances, which share the activation of elements
//! at any depth.

use beeline_protocol::intent::{
    JobIntent, ProcessInstanceCreationIntent, ProcessInstanceIntent as PI,
    ProcessInstanceModificationIntent, UserTaskIntent,
};
use beeline_protocol::value::{
    ActivateInstruction, ProcessInstanceCreationRecord, ProcessInstanceModificationRecord,
    ProcessInstanceRecord, StartInstruction, TerminateInstruction, VariableInstruction,
    VariableRecord,
};
use beeline_protocol::{Record, RecordType, RejectionType, ValueType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

use crate::json;

fn activate(element_id: &str) -> ActivateInstruction {
    ActivateInstruction {
        element_id: element_id.into(),
        ancestor_scope_key: -1,
        ..Default::default()
    }
}

fn in_ancestor(element_id: &str, ancestor: i64) -> ActivateInstruction {
    ActivateInstruction {
        ancestor_scope_key: ancestor,
        ..activate(element_id)
    }
}

fn with_variables(
    mut instruction: ActivateInstruction,
    scope: &str,
    variables: &str,
) -> ActivateInstruction {
    instruction.variable_instructions.push(VariableInstruction {
        variables: variables.as_bytes().to_vec(),
        element_id: scope.into(),
    });
    instruction
}

fn terminate(key: i64) -> TerminateInstruction {
    TerminateInstruction {
        element_instance_key: key,
    }
}

/// Sends MODIFY for `instance`; the answer (MODIFIED or the rejection).
fn modify(
    harness: &Harness,
    instance: i64,
    activate: Vec<ActivateInstruction>,
    terminate: Vec<TerminateInstruction>,
) -> Record {
    harness
        .execute(Record::command(
            instance,
            ProcessInstanceModificationIntent::Modify,
            ProcessInstanceModificationRecord {
                process_instance_key: instance,
                activate_instructions: activate,
                terminate_instructions: terminate,
                ..Default::default()
            },
        ))
        .unwrap()
}

fn modified(
    harness: &Harness,
    instance: i64,
    a: Vec<ActivateInstruction>,
    t: Vec<TerminateInstruction>,
) -> ProcessInstanceModificationRecord {
    let answer = modify(harness, instance, a, t);
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{}\n{}",
        answer.rejection_reason,
        harness.records().log()
    );
    assert_eq!(answer.key, instance);
    answer
        .value_as::<ProcessInstanceModificationRecord>()
        .unwrap()
        .clone()
}

/// The rejection of a modification, which must have changed nothing.
fn refused(
    harness: &Harness,
    instance: i64,
    a: Vec<ActivateInstruction>,
    t: Vec<TerminateInstruction>,
) -> (RejectionType, String) {
    let before = harness.records().len();
    let answer = modify(harness, instance, a, t);
    assert_eq!(
        answer.record_type,
        RecordType::CommandRejection,
        "{}",
        harness.records().log()
    );
    let records = harness.records();
    // The command and its rejection, nothing else.
    assert_eq!(records.len(), before + 2, "{}", records.log());
    (answer.rejection_type, answer.rejection_reason)
}

/// The key of the one active instance of `element`.
fn instance_of(harness: &Harness, element: &str) -> i64 {
    let activated = harness
        .records()
        .with_element(element)
        .with_intent(PI::ElementActivated)
        .list()
        .iter()
        .map(|r| r.key)
        .collect::<Vec<_>>();
    let ended: Vec<i64> = harness
        .records()
        .with_element(element)
        .matching(|r| {
            r.intent == PI::ElementCompleted.into() || r.intent == PI::ElementTerminated.into()
        })
        .list()
        .iter()
        .map(|r| r.key)
        .collect();
    let active: Vec<i64> = activated
        .into_iter()
        .filter(|k| !ended.contains(k))
        .collect();
    assert_eq!(
        active.len(),
        1,
        "{element}: {active:?}\n{}",
        harness.records().log()
    );
    active[0]
}

fn expect_completed(harness: &Harness) {
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

fn two_tasks() -> ProcessBuilder {
    ProcessBuilder::new("p")
        .start_event("start")
        .service_task("a", "a")
        .service_task("b", "b")
        .end_event("end")
}

/// `start -> a -> sub (sub-start -> inner -> sub-end) -> end`.
fn with_sub_process() -> ProcessBuilder {
    ProcessBuilder::new("p")
        .start_event("start")
        .service_task("a", "a")
        .sub_process("sub")
        .start_event("sub-start")
        .service_task("inner", "inner")
        .end_event("sub-end")
        .end_sub_process()
        .end_event("end")
}

#[test]
fn a_modification_activates_then_terminates_in_zeebes_order() {
    let harness = Harness::new(1);
    harness.deploy_process(&two_tasks());
    let instance = harness.create_instance("p", "{}");
    let a = instance_of(&harness, "a");
    let before = harness.records().len();
    let value = modified(&harness, instance, vec![activate("b")], vec![terminate(a)]);
    assert_eq!(value.ancestor_scope_keys, vec![instance]);
    assert_eq!(
        value.activate_instructions[0].ancestor_scope_keys,
        vec![instance]
    );
    assert_eq!(value.terminate_instructions, vec![terminate(a)]);
    let records = harness.records();
    let steps = records.steps()[before..].to_vec();
    assert_eq!(
        steps,
        vec![
            "PROCESS_INSTANCE_MODIFICATION MODIFY",
            "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK b",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SERVICE_TASK a",
            "JOB CANCELED",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK a",
            "PROCESS_INSTANCE_MODIFICATION MODIFIED",
            "PROCESS_INSTANCE ELEMENT_ACTIVATING SERVICE_TASK b",
            "JOB CREATED",
            "PROCESS_INSTANCE ELEMENT_ACTIVATED SERVICE_TASK b",
        ],
        "{}",
        records.log()
    );
    assert!(harness.activate_jobs("a", 1).is_empty());
    let (job, _) = harness.activate_job("b");
    harness.complete_job(job, "{}").unwrap();
    expect_completed(&harness);
}

#[test]
fn an_element_inside_a_sub_process_gets_its_flow_scope_made_and_the_variables() {
    let harness = Harness::new(1);
    harness.deploy_process(&with_sub_process());
    let instance = harness.create_instance("p", "{}");
    let a = instance_of(&harness, "a");
    let before = harness.records().len();
    let instruction = with_variables(
        with_variables(activate("inner"), "sub", r#"{"local": 1}"#),
        "",
        r#"{"global": 2}"#,
    );
    let instruction = with_variables(instruction, "inner", r#"{"own": 3}"#);
    let value = modified(&harness, instance, vec![instruction], vec![terminate(a)]);
    let sub = instance_of(&harness, "sub");
    assert_eq!(
        value.activate_instructions[0].ancestor_scope_keys,
        vec![instance, sub]
    );
    let records = harness.records();
    let steps = records.steps()[before..].to_vec();
    assert_eq!(
        steps[..12].to_vec(),
        vec![
            "PROCESS_INSTANCE_MODIFICATION MODIFY",
            "VARIABLE CREATED global",
            "PROCESS_INSTANCE ELEMENT_ACTIVATING SUB_PROCESS sub",
            "VARIABLE CREATED local",
            "PROCESS_INSTANCE ELEMENT_ACTIVATED SUB_PROCESS sub",
            "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK inner",
            "VARIABLE CREATED own",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SERVICE_TASK a",
            "JOB CANCELED",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK a",
            "PROCESS_INSTANCE_MODIFICATION MODIFIED",
            "PROCESS_INSTANCE ELEMENT_ACTIVATING SERVICE_TASK inner",
        ],
        "{}",
        records.log()
    );
    // The sub-process started at the element, not at its start event.
    harness.records().with_element("sub-start").expect_none();
    let scopes: Vec<(String, i64)> = harness
        .records()
        .events()
        .with_value_type(ValueType::Variable)
        .values::<VariableRecord>()
        .into_iter()
        .map(|v| (v.name, v.scope_key))
        .collect();
    let inner = instance_of(&harness, "inner");
    assert_eq!(
        scopes,
        vec![
            ("global".to_string(), instance),
            ("local".to_string(), sub),
            ("own".to_string(), inner)
        ]
    );
    let (job, record) = harness.activate_job("inner");
    assert_eq!(
        json(&record.variables),
        serde_json::json!({"global": 2, "local": 1, "own": 3})
    );
    harness.complete_job(job, "{}").unwrap();
    expect_completed(&harness);
}

#[test]
fn terminating_the_last_element_terminates_the_emptied_flow_scopes_bottom_up() {
    let harness = Harness::new(1);
    harness.deploy_process(&with_sub_process());
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("a");
    harness.complete_job(job, "{}").unwrap();
    let inner = instance_of(&harness, "inner");
    let before = harness.records().len();
    modified(&harness, instance, vec![], vec![terminate(inner)]);
    let records = harness.records();
    assert_eq!(
        records.steps()[before..].to_vec(),
        vec![
            "PROCESS_INSTANCE_MODIFICATION MODIFY",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SERVICE_TASK inner",
            "JOB CANCELED",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK inner",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SUB_PROCESS sub",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SUB_PROCESS sub",
            "PROCESS_INSTANCE ELEMENT_TERMINATING PROCESS p",
            "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS p",
            "PROCESS_INSTANCE_MODIFICATION MODIFIED",
        ],
        "{}",
        records.log()
    );
}

#[test]
fn terminating_a_sub_process_terminates_its_children_top_down_then_bottom_up() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &with_sub_process()
            .move_to("a")
            .service_task("side", "side")
            .end_event("side-end"),
    );
    // `a` is followed by both `sub` and `side` (two flows out of `a`).
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("a");
    harness.complete_job(job, "{}").unwrap();
    let sub = instance_of(&harness, "sub");
    let before = harness.records().len();
    modified(&harness, instance, vec![], vec![terminate(sub)]);
    assert_eq!(
        harness.records().steps()[before..].to_vec(),
        vec![
            "PROCESS_INSTANCE_MODIFICATION MODIFY",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SUB_PROCESS sub",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SERVICE_TASK inner",
            "JOB CANCELED",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK inner",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SUB_PROCESS sub",
            "PROCESS_INSTANCE_MODIFICATION MODIFIED",
        ],
        "{}",
        harness.records().log()
    );
    // The process goes on with the other path.
    let (job, _) = harness.activate_job("side");
    harness.complete_job(job, "{}").unwrap();
    expect_completed(&harness);
}

#[test]
fn an_activation_keeps_the_flow_scope_a_termination_would_empty() {
    let harness = Harness::new(1);
    harness.deploy_process(&with_sub_process());
    let instance = harness.create_instance("p", "{}");
    let (job, _) = harness.activate_job("a");
    harness.complete_job(job, "{}").unwrap();
    let inner = instance_of(&harness, "inner");
    let sub = instance_of(&harness, "sub");
    modified(
        &harness,
        instance,
        vec![activate("inner")],
        vec![terminate(inner)],
    );
    assert_eq!(instance_of(&harness, "sub"), sub);
    assert_ne!(instance_of(&harness, "inner"), inner);
    harness
        .records()
        .with_element("sub")
        .with_intent(PI::ElementTerminating)
        .expect_none();
    let (job, _) = harness.activate_job("inner");
    harness.complete_job(job, "{}").unwrap();
    expect_completed(&harness);
}

#[test]
fn an_ancestor_selects_among_flow_scope_instances() {
    let harness = Harness::new(1);
    harness.deploy_process(&with_sub_process());
    let instance = harness.create_instance("p", "{}");
    // Two instances of the sub-process, each at its start.
    modified(
        &harness,
        instance,
        vec![activate("sub"), activate("sub")],
        vec![],
    );
    let subs: Vec<i64> = harness
        .records()
        .with_element("sub")
        .with_intent(PI::ElementActivated)
        .list()
        .iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(subs.len(), 2);
    let (kind, reason) = refused(&harness, instance, vec![activate("inner")], vec![]);
    assert_eq!(kind, RejectionType::InvalidArgument);
    assert_eq!(
        reason,
        "Expected to modify instance of process 'p' but it contains one or more activate instructions for an element that has a flow scope with more than one active instance: 'sub'. Can't decide in which instance of the flow scope the element should be activated. Please specify an ancestor element instance key for this activate instruction."
    );
    // The selected instance of the sub-process takes it.
    let value = modified(
        &harness,
        instance,
        vec![in_ancestor("inner", subs[1])],
        vec![],
    );
    assert_eq!(
        value.activate_instructions[0].ancestor_scope_keys,
        vec![instance, subs[1]]
    );
    let inners: Vec<ProcessInstanceRecord> = harness
        .records()
        .with_element("inner")
        .with_intent(PI::ElementActivated)
        .values();
    assert_eq!(inners.last().unwrap().flow_scope_key, subs[1]);
    // Selecting the process instance makes a new instance of the sub-process for it.
    let value = modified(
        &harness,
        instance,
        vec![in_ancestor("inner", instance)],
        vec![],
    );
    let made = value.activate_instructions[0].ancestor_scope_keys[1];
    assert!(!subs.contains(&made));
    harness
        .records()
        .with_key(made)
        .with_intent(PI::ElementActivated)
        .expect_one();
}

#[test]
fn modifications_that_may_not_run_are_refused_whole() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &with_sub_process()
            .move_to("a")
            .boundary_event("late", "a", &timer("timeDuration", "PT1H"), true)
            .end_event("late-end")
            .move_to("a")
            .event_based_gateway("choice")
            .catch_event("wait", &timer("timeDuration", "PT1M"))
            .end_event("choice-end")
            .move_to("choice")
            .catch_event("wait-more", &timer("timeDuration", "PT2M"))
            .end_event("choice-end-2"),
    );
    let instance = harness.create_instance("p", "{}");
    let a = instance_of(&harness, "a");
    let prefix = "Expected to modify instance of process 'p' but it contains one or more";

    let missing = harness.execute(Record::command(
        42,
        ProcessInstanceModificationIntent::Modify,
        ProcessInstanceModificationRecord {
            process_instance_key: 42,
            ..Default::default()
        },
    ));
    let missing = missing.unwrap();
    assert_eq!(missing.rejection_type, RejectionType::NotFound);
    assert_eq!(
        missing.rejection_reason,
        "Expected to modify process instance but no process instance found with key '42'"
    );

    let cases: Vec<(Vec<ActivateInstruction>, Vec<TerminateInstruction>, String)> = vec![
        (
            vec![activate("b"), activate("nope"), activate("nope")],
            vec![terminate(a)],
            format!(
                "{prefix} activate instructions with an element that could not be found: 'b', 'nope'"
            ),
        ),
        (
            vec![activate("wait")],
            vec![],
            format!(
                "{prefix} activate instructions for elements that are unsupported: 'wait'. The activation of events belonging to an event-based gateway is not supported."
            ),
        ),
        (
            vec![activate("start"), activate("late")],
            vec![],
            format!(
                "{prefix} activate instructions for elements that are unsupported: 'start', 'late'. The activation of elements with type 'START_EVENT', 'BOUNDARY_EVENT' is not supported. Supported element types are: [PROCESS, SUB_PROCESS, EVENT_SUB_PROCESS, AD_HOC_SUB_PROCESS, INTERMEDIATE_CATCH_EVENT, INTERMEDIATE_THROW_EVENT, END_EVENT, SERVICE_TASK, RECEIVE_TASK, USER_TASK, MANUAL_TASK, TASK, EXCLUSIVE_GATEWAY, PARALLEL_GATEWAY, EVENT_BASED_GATEWAY, INCLUSIVE_GATEWAY, MULTI_INSTANCE_BODY, CALL_ACTIVITY, BUSINESS_RULE_TASK, SCRIPT_TASK, SEND_TASK]."
            ),
        ),
        (
            vec![activate("inner")],
            vec![terminate(a), terminate(123)],
            format!(
                "{prefix} terminate instructions with an element instance that could not be found: '123'"
            ),
        ),
        (
            vec![with_variables(activate("inner"), "elsewhere", "{}")],
            vec![],
            format!(
                "{prefix} variable instructions with a scope element id that could not be found: 'elsewhere'"
            ),
        ),
        (
            vec![with_variables(activate("inner"), "a", "{}")],
            vec![],
            format!(
                "{prefix} variable instructions with a scope element that doesn't belong to the activating element's flow scope. These variables should be set before or after the modification."
            ),
        ),
        (
            vec![in_ancestor("inner", 999)],
            vec![],
            format!(
                "{prefix} activate instructions with an ancestor scope key that does not exist, or is not in an active state: '999'"
            ),
        ),
        (
            vec![in_ancestor("inner", a)],
            vec![],
            format!(
                "{prefix} activate instructions with an ancestor scope key that is not an ancestor of the element to activate:\n- instance '{a}' of element 'a' is not an ancestor of element 'inner'"
            ),
        ),
        (
            vec![activate("inner")],
            vec![terminate(instance)],
            format!(
                "Expected to modify instance of process 'p' but it contains one or more activate instructions for elements whose required flow scope instance is also being terminated: element 'inner' requires flow scope instance '{instance}' which is being terminated. Please provide a valid ancestor scope key for the activation or avoid terminating the required flow scope."
            ),
        ),
    ];
    for (activations, terminations, expected) in cases {
        let (kind, reason) = refused(&harness, instance, activations, terminations);
        assert_eq!(kind, RejectionType::InvalidArgument);
        assert_eq!(reason, expected);
    }
    // Still where it was.
    assert_eq!(instance_of(&harness, "a"), a);
}

#[test]
fn a_flow_scope_whose_events_cannot_be_subscribed_rolls_the_modification_back() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &with_sub_process()
            .move_to("sub")
            .boundary_event("late", "sub", &timer("timeDuration", "=later"), true)
            .end_event("late-end"),
    );
    let instance = harness.create_instance("p", "{}");
    let a = instance_of(&harness, "a");
    let (kind, reason) = refused(
        &harness,
        instance,
        vec![activate("inner")],
        vec![terminate(a)],
    );
    assert_eq!(kind, RejectionType::InvalidArgument);
    assert!(
        reason.starts_with("Expected to subscribe to catch event(s) of 'sub' but "),
        "{reason}"
    );
    assert_eq!(instance_of(&harness, "a"), a);
    // With the variable, the same modification runs.
    let value = modified(
        &harness,
        instance,
        vec![with_variables(
            activate("inner"),
            "",
            r#"{"later": "PT1H"}"#,
        )],
        vec![terminate(a)],
    );
    assert_eq!(value.activate_instructions.len(), 1);
    instance_of(&harness, "inner");
}

#[test]
fn inside_a_multi_instance_an_existing_inner_instance_is_needed() {
    let harness = Harness::new(1);
    harness.deploy_process(&with_sub_process().multi_instance(
        "sub",
        false,
        r#"inputCollection="= [1, 2]" inputElement="item""#,
        None,
    ));
    let instance = harness.create_instance("p", "{}");
    let (kind, reason) = refused(&harness, instance, vec![activate("inner")], vec![]);
    assert_eq!(kind, RejectionType::InvalidArgument);
    assert_eq!(
        reason,
        "Expected to modify instance of process 'p' but it contains one or more activate instructions that would result in the activation of multi-instance element 'sub', which is currently unsupported."
    );
    let (job, _) = harness.activate_job("a");
    harness.complete_job(job, "{}").unwrap();
    // Two inner instances: one must be selected.
    let inners: Vec<i64> = harness
        .records()
        .with_element("sub")
        .with_intent(PI::ElementActivated)
        .matching(|r| {
            r.value_as::<ProcessInstanceRecord>()
                .is_some_and(|v| v.bpmn_element_type == "SUB_PROCESS")
        })
        .list()
        .iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(inners.len(), 2);
    let (_, reason) = refused(&harness, instance, vec![activate("inner")], vec![]);
    assert!(
        reason.contains("more than one active instance: 'sub'"),
        "{reason}"
    );
    modified(
        &harness,
        instance,
        vec![in_ancestor("inner", inners[0])],
        vec![],
    );
    assert_eq!(harness.activate_jobs("inner", 10).len(), 3);
}

#[test]
fn terminating_a_call_activity_terminates_the_called_instance_and_a_child_is_not_emptied() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("child")
            .start_event("child-start")
            .service_task("work", "child-work")
            .end_event("child-end"),
    );
    harness.deploy_process(
        &ProcessBuilder::new("parent")
            .start_event("start")
            .call_activity("call", r#"processId="child""#, "")
            .end_event("end")
            .move_to("start")
            .service_task("side", "side")
            .end_event("side-end"),
    );
    let instance = harness.create_instance("parent", "{}");
    let work = instance_of(&harness, "work");
    let child = harness
        .records()
        .with_element("child")
        .with_intent(PI::ElementActivated)
        .expect_one()
        .key;
    let (kind, reason) = refused(&harness, child, vec![], vec![terminate(work)]);
    assert_eq!(kind, RejectionType::InvalidArgument);
    assert_eq!(
        reason,
        "Expected to modify instance of process 'child' but the given instructions would terminate the instance. The instance was created by a call activity in the parent process. To terminate this instance please modify the parent process instead."
    );
    let call = instance_of(&harness, "call");
    let before = harness.records().len();
    modified(&harness, instance, vec![], vec![terminate(call)]);
    assert_eq!(
        harness.records().steps()[before..].to_vec(),
        vec![
            "PROCESS_INSTANCE_MODIFICATION MODIFY",
            "PROCESS_INSTANCE ELEMENT_TERMINATING CALL_ACTIVITY call",
            "PROCESS_INSTANCE ELEMENT_TERMINATING PROCESS child",
            "PROCESS_INSTANCE ELEMENT_TERMINATING SERVICE_TASK work",
            "JOB CANCELED",
            "PROCESS_INSTANCE ELEMENT_TERMINATED SERVICE_TASK work",
            "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS child",
            "PROCESS_INSTANCE ELEMENT_TERMINATED CALL_ACTIVITY call",
            "PROCESS_INSTANCE_MODIFICATION MODIFIED",
        ],
        "{}",
        harness.records().log()
    );
    instance_of(&harness, "side");
}

#[test]
fn a_user_task_terminated_by_a_modification_is_canceled_without_its_listeners() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .user_task(
                "review",
                true,
                r#"<zeebe:taskListeners><zeebe:taskListener eventType="canceling" type="on-cancel"/></zeebe:taskListeners>"#,
            )
            .service_task("next", "next")
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    let review = instance_of(&harness, "review");
    modified(
        &harness,
        instance,
        vec![activate("next")],
        vec![terminate(review)],
    );
    harness
        .records()
        .with_intent(UserTaskIntent::Canceling)
        .expect_one();
    harness
        .records()
        .with_intent(UserTaskIntent::Canceled)
        .expect_one();
    assert!(harness.activate_jobs("on-cancel", 1).is_empty());
    harness
        .records()
        .with_intent(JobIntent::Created)
        .matching(|r| {
            r.value_as::<beeline_protocol::value::JobRecord>()
                .is_some_and(|j| j.r#type == "on-cancel")
        })
        .expect_none();
    instance_of(&harness, "next");
}

fn create_at(harness: &Harness, elements: &[&str]) -> Record {
    harness
        .execute(Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            ProcessInstanceCreationRecord {
                bpmn_process_id: "p".into(),
                version: -1,
                start_instructions: elements
                    .iter()
                    .map(|e| StartInstruction {
                        element_id: e.to_string(),
                    })
                    .collect(),
                ..Default::default()
            },
        ))
        .unwrap()
}

#[test]
fn start_instructions_reach_into_sub_processes() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &with_sub_process()
            .move_to("sub")
            .boundary_event("late", "sub", &timer("timeDuration", "PT1H"), true)
            .end_event("late-end"),
    );
    let created = create_at(&harness, &["inner", "a"]);
    assert_eq!(
        created.record_type,
        RecordType::Event,
        "{}",
        created.rejection_reason
    );
    let records = harness.records();
    records.expect_subsequence(&[
        "PROCESS_INSTANCE_CREATION CREATE",
        "PROCESS_INSTANCE ELEMENT_ACTIVATING PROCESS p",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED PROCESS p",
        "PROCESS_INSTANCE ELEMENT_ACTIVATING SUB_PROCESS sub",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED SUB_PROCESS sub",
        "TIMER CREATED",
        "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK inner",
        "PROCESS_INSTANCE ACTIVATE_ELEMENT SERVICE_TASK a",
        "PROCESS_INSTANCE_CREATION CREATED",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED SERVICE_TASK inner",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED SERVICE_TASK a",
    ]);
    harness.records().with_element("start").expect_none();
    harness.records().with_element("sub-start").expect_none();
    for job_type in ["inner", "a"] {
        let (job, _) = harness.activate_job(job_type);
        harness.complete_job(job, "{}").unwrap();
    }
    // `a` leads into a second instance of the sub-process.
    let (job, _) = harness.activate_job("inner");
    harness.complete_job(job, "{}").unwrap();
    expect_completed(&harness);
}

#[test]
fn start_instructions_zeebe_refuses_are_refused() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &with_sub_process()
            .multi_instance(
                "sub",
                false,
                r#"inputCollection="= [1]" inputElement="item""#,
                None,
            )
            .move_to("a")
            .event_based_gateway("choice")
            .catch_event("wait", &timer("timeDuration", "PT1M"))
            .end_event("choice-end")
            .move_to("choice")
            .catch_event("wait-more", &timer("timeDuration", "PT2M"))
            .end_event("choice-end-2"),
    );
    let prefix = "Expected to create instance of process with start instructions but";
    for (elements, expected) in [
        (
            vec!["a", "nope"],
            format!("{prefix} no element found with id 'nope'."),
        ),
        (
            vec!["inner"],
            format!(
                "{prefix} the element with id 'inner' is inside a multi-instance subprocess. The creation of elements inside a multi-instance subprocess is not supported."
            ),
        ),
        (
            vec!["start"],
            format!(
                "{prefix} the element with id 'start' targets unsupported element type 'START_EVENT'. Supported element types are: [PROCESS, SUB_PROCESS, EVENT_SUB_PROCESS, AD_HOC_SUB_PROCESS, INTERMEDIATE_CATCH_EVENT, INTERMEDIATE_THROW_EVENT, END_EVENT, SERVICE_TASK, RECEIVE_TASK, USER_TASK, MANUAL_TASK, TASK, EXCLUSIVE_GATEWAY, PARALLEL_GATEWAY, EVENT_BASED_GATEWAY, INCLUSIVE_GATEWAY, MULTI_INSTANCE_BODY, CALL_ACTIVITY, BUSINESS_RULE_TASK, SCRIPT_TASK, SEND_TASK]"
            ),
        ),
        (
            vec!["wait"],
            format!(
                "{prefix} the element with id 'wait' belongs to an event-based gateway. The creation of elements belonging to an event-based gateway is not supported."
            ),
        ),
    ] {
        let answer = create_at(&harness, &elements);
        assert_eq!(answer.record_type, RecordType::CommandRejection);
        assert_eq!(answer.rejection_type, RejectionType::InvalidArgument);
        assert_eq!(answer.rejection_reason, expected);
    }
    // The multi-instance sub-process itself may be a start instruction.
    let created = create_at(&harness, &["sub"]);
    assert_eq!(
        created.record_type,
        RecordType::Event,
        "{}",
        created.rejection_reason
    );
    let (job, _) = harness.activate_job("inner");
    harness.complete_job(job, "{}").unwrap();
    expect_completed(&harness);
}
