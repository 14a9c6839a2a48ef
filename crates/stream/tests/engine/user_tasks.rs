//! User tasks: Camunda user tasks with their USER_TASK lifecycle (assignment, schedule,
//! priority, forms; assign, claim, update, complete; cancellation), and job-worker user tasks
//! as jobs of type `io.camunda.zeebe:userTask` with Zeebe's headers.

use beeline_protocol::intent::{
    IncidentIntent, JobIntent, ProcessInstanceIntent as PI, UserTaskIntent,
};
use beeline_protocol::value::{DeploymentRecord, IncidentRecord, UserTaskRecord, VariableRecord};
use beeline_protocol::{RecordType, RejectionType, ValueType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

use crate::json;

/// `start -> review (a Camunda user task with `extensions`) -> end`.
fn review(extensions: &str) -> ProcessBuilder {
    ProcessBuilder::new("p")
        .start_event("start")
        .user_task("review", true, extensions)
        .end_event("end")
}

/// The user task the process created, as its CREATED event has it.
fn created_task(harness: &Harness) -> (i64, UserTaskRecord) {
    let created = harness
        .records()
        .with_intent(UserTaskIntent::Created)
        .expect_one();
    (
        created.key,
        created.value_as::<UserTaskRecord>().unwrap().clone(),
    )
}

fn expect_event(answer: beeline_protocol::Record) -> UserTaskRecord {
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{} {}",
        answer.rejection_type.name(),
        answer.rejection_reason
    );
    answer.value_as::<UserTaskRecord>().unwrap().clone()
}

#[test]
fn a_camunda_user_task_is_created_and_assigned_in_zeebes_order() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:assignmentDefinition assignee="=owner" candidateGroups="sales, support" candidateUsers="=[&quot;ann&quot;, &quot;bo&quot;]"/><zeebe:taskSchedule dueDate="=deadline" followUpDate="2023-12-01T09:00:00+01:00"/><zeebe:priorityDefinition priority="=80"/><zeebe:taskHeaders><zeebe:header key="kind" value="review"/></zeebe:taskHeaders>"#,
    ));
    let instance = harness.create_instance(
        "p",
        r#"{"owner": "alice", "deadline": "2023-11-20T17:30:00Z"}"#,
    );
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ELEMENT_ACTIVATING USER_TASK review",
        "USER_TASK CREATING",
        "USER_TASK CREATED",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED USER_TASK review",
        "USER_TASK ASSIGNING",
        "USER_TASK ASSIGNED",
    ]);
    let creating = harness
        .records()
        .with_intent(UserTaskIntent::Creating)
        .expect_one();
    let task = creating.value_as::<UserTaskRecord>().unwrap();
    assert_eq!(
        task.assignee, "alice",
        "CREATING carries the assignee to come"
    );
    assert_eq!(task.candidate_groups_list, vec!["sales", "support"]);
    assert_eq!(task.candidate_users_list, vec!["ann", "bo"]);
    assert_eq!(
        task.due_date, "2023-11-20T17:30Z",
        "as Zeebe prints a zoned date-time"
    );
    assert_eq!(task.follow_up_date, "2023-12-01T09:00+01:00");
    assert_eq!(task.priority, 80);
    assert_eq!(task.form_key, -1);
    assert_eq!(task.custom_headers["kind"], "review");
    assert_eq!(task.creation_timestamp, beeline_stream::testkit::START_TIME);
    assert_eq!(task.process_instance_key, instance);
    let (key, created) = created_task(&harness);
    assert_eq!(key, creating.key);
    assert_eq!(created.assignee, "", "CREATED comes without the assignee");
    let assigned = harness
        .records()
        .with_intent(UserTaskIntent::Assigned)
        .expect_one();
    let assigned = assigned.value_as::<UserTaskRecord>().unwrap();
    assert_eq!(assigned.assignee, "alice");
    assert_eq!(assigned.changed_attributes, vec!["assignee"]);
    assert_eq!(
        harness
            .records()
            .with_key(task.element_instance_key)
            .with_intent(PI::ElementActivated)
            .len(),
        1
    );
}

#[test]
fn completing_a_user_task_completes_its_element_with_the_variables() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(""));
    let instance = harness.create_instance("p", "{}");
    let (key, _) = created_task(&harness);
    let completed = expect_event(
        harness
            .complete_user_task(key, r#"{"approved": true}"#)
            .unwrap(),
    );
    assert_eq!(completed.action, "complete");
    assert_eq!(json(&completed.variables)["approved"], true);
    harness.records().expect_subsequence(&[
        "USER_TASK COMPLETE",
        "USER_TASK COMPLETING",
        "USER_TASK COMPLETED",
        "PROCESS_INSTANCE COMPLETE_ELEMENT USER_TASK review",
        "PROCESS_INSTANCE ELEMENT_COMPLETING USER_TASK review",
        "VARIABLE CREATED approved",
        "PROCESS_INSTANCE ELEMENT_COMPLETED USER_TASK review",
        "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
    ]);
    let approved = harness
        .records()
        .with_value_type(ValueType::Variable)
        .values::<VariableRecord>()
        .into_iter()
        .find(|v| v.name == "approved")
        .unwrap();
    assert_eq!(approved.scope_key, instance);

    let again = harness.complete_user_task(key, "{}").unwrap();
    assert_eq!(again.rejection_type, RejectionType::NotFound);
    assert_eq!(
        again.rejection_reason,
        format!("Expected to complete user task with key '{key}', but no such user task was found")
    );
    let invalid = harness.complete_user_task(key, "[1]").unwrap();
    assert_eq!(invalid.rejection_type, RejectionType::InvalidArgument);
}

#[test]
fn a_user_task_is_assigned_unassigned_and_claimed() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(""));
    harness.create_instance("p", "{}");
    let (key, _) = created_task(&harness);

    let task = expect_event(harness.assign_user_task(key, "bob").unwrap());
    assert_eq!(
        (task.assignee.as_str(), task.action.as_str()),
        ("bob", "assign")
    );
    assert_eq!(task.changed_attributes, vec!["assignee"]);
    let taken = harness.claim_user_task(key, "carol").unwrap();
    assert_eq!(taken.rejection_type, RejectionType::InvalidState);
    assert_eq!(
        taken.rejection_reason,
        format!("Expected to claim user task with key '{key}', but it has already been assigned")
    );
    let empty = harness.claim_user_task(key, "").unwrap();
    assert_eq!(empty.rejection_type, RejectionType::InvalidState);

    let unassigned = expect_event(harness.assign_user_task(key, "").unwrap());
    assert_eq!(unassigned.assignee, "");
    let claimed = expect_event(harness.claim_user_task(key, "carol").unwrap());
    assert_eq!(
        (claimed.assignee.as_str(), claimed.action.as_str()),
        ("carol", "claim")
    );
    harness.records().expect_subsequence(&[
        "USER_TASK ASSIGN",
        "USER_TASK ASSIGNING",
        "USER_TASK ASSIGNED",
        "REJECTED USER_TASK CLAIM",
        "USER_TASK CLAIM",
        "USER_TASK CLAIMING",
        "USER_TASK ASSIGNED",
    ]);
}

#[test]
fn an_update_changes_only_the_attributes_it_names() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:assignmentDefinition candidateGroups="sales"/>"#,
    ));
    harness.create_instance("p", "{}");
    let (key, _) = created_task(&harness);
    let updated = expect_event(
        harness
            .user_task_command(
                key,
                UserTaskIntent::Update,
                UserTaskRecord {
                    candidate_groups_list: vec!["ops".into()],
                    candidate_users_list: vec!["ignored".into()],
                    priority: 90,
                    changed_attributes: vec!["candidateGroupsList".into(), "priority".into()],
                    ..Default::default()
                },
            )
            .unwrap(),
    );
    assert_eq!(updated.candidate_groups_list, vec!["ops"]);
    assert!(
        updated.candidate_users_list.is_empty(),
        "not named, not changed"
    );
    assert_eq!(updated.priority, 90);
    assert_eq!(updated.action, "update");
    harness.records().expect_subsequence(&[
        "USER_TASK UPDATE",
        "USER_TASK UPDATING",
        "USER_TASK UPDATED",
    ]);
    let refused = harness
        .user_task_command(
            key,
            UserTaskIntent::Update,
            UserTaskRecord {
                changed_attributes: vec!["assignee".into()],
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(refused.rejection_type, RejectionType::InvalidArgument);
}

#[test]
fn terminating_the_element_cancels_its_user_task() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &review("")
            .boundary_event("escalate", "review", &timer("timeDuration", "P1D"), true)
            .end_event("escalated"),
    );
    let instance = harness.create_instance("p", "{}");
    let (key, _) = created_task(&harness);
    harness.advance_time(24 * 3600 * 1000);
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ELEMENT_TERMINATING USER_TASK review",
        "USER_TASK CANCELING",
        "USER_TASK CANCELED",
        "PROCESS_INSTANCE ELEMENT_TERMINATED USER_TASK review",
        "PROCESS_INSTANCE ELEMENT_COMPLETED BOUNDARY_EVENT escalate",
    ]);
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
    let gone = harness.complete_user_task(key, "{}").unwrap();
    assert_eq!(gone.rejection_type, RejectionType::NotFound);
}

pub const FORM: &str = r#"{"id": "approval-form", "components": [{"key": "approved", "type": "checkbox"}], "type": "default"}"#;

#[test]
fn a_user_task_links_the_form_it_names_and_a_missing_form_is_an_incident() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(r#"<zeebe:formDefinition formId="approval-form"/>"#));
    let instance = harness.create_instance("p", "{}");
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "FORM_NOT_FOUND");
    assert_eq!(
        value.error_message,
        "Expected to find a form with id 'approval-form', but no form with this id is found, at least a form with this id should be available. To resolve the Incident please deploy a form with the same id"
    );

    let deployed = harness.deploy("approval.form", FORM).unwrap();
    assert_eq!(deployed.record_type, RecordType::Event);
    let form = &deployed
        .value_as::<DeploymentRecord>()
        .unwrap()
        .form_metadata[0];
    assert_eq!((form.form_id.as_str(), form.version), ("approval-form", 1));
    harness.resolve_incident(incident.key).unwrap();
    let (_, task) = created_task(&harness);
    assert_eq!(task.form_key, form.form_key);
    assert_eq!(task.process_instance_key, instance);

    // The same form again is no new version; a changed one is.
    let same = harness.deploy("approval.form", FORM).unwrap();
    assert!(same.value_as::<DeploymentRecord>().unwrap().form_metadata[0].is_duplicate);
    let changed = harness
        .deploy("approval.form", &FORM.replace("checkbox", "textfield"))
        .unwrap();
    assert_eq!(
        changed
            .value_as::<DeploymentRecord>()
            .unwrap()
            .form_metadata[0]
            .version,
        2
    );
}

#[test]
fn a_form_without_id_is_refused_at_deployment() {
    let harness = Harness::new(1);
    let refused = harness
        .deploy("nameless.form", r#"{"components": []}"#)
        .unwrap();
    assert_eq!(refused.rejection_type, RejectionType::InvalidArgument);
    assert!(
        refused
            .rejection_reason
            .contains("'nameless.form': Expected the form id to be present, but none given"),
        "{}",
        refused.rejection_reason
    );
}

#[test]
fn user_task_properties_that_fail_are_incidents_a_user_can_resolve() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:assignmentDefinition candidateGroups="=groups"/><zeebe:priorityDefinition priority="=level"/>"#,
    ));
    let instance = harness.create_instance("p", r#"{"groups": "not a list", "level": 500}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert_eq!(
        value.error_message,
        "Expected result of the expression 'groups' to be 'ARRAY', but was 'STRING'."
    );
    harness
        .set_variables(instance, r#"{"groups": ["a"]}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    let second = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .list()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(
        second.value_as::<IncidentRecord>().unwrap().error_message,
        "Expected priority to be in the range [0,100] but was '500'."
    );
    harness
        .set_variables(instance, r#"{"level": 10}"#, false)
        .unwrap();
    harness.resolve_incident(second.key).unwrap();
    let (_, task) = created_task(&harness);
    assert_eq!(
        (task.candidate_groups_list, task.priority),
        (vec!["a".to_string()], 10)
    );
}

#[test]
fn a_job_worker_user_task_is_a_job_with_zeebes_headers() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("start")
            .user_task(
                "review",
                false,
                r#"<zeebe:assignmentDefinition assignee="alice" candidateGroups="sales, support"/><zeebe:taskSchedule dueDate="2023-11-20T17:30:00Z"/><zeebe:formDefinition formKey="camunda-forms:bpmn:review-form"/><zeebe:taskHeaders><zeebe:header key="kind" value="review"/></zeebe:taskHeaders>"#,
            )
            .end_event("end"),
    );
    let instance = harness.create_instance("p", "{}");
    harness.records().expect_subsequence(&[
        "PROCESS_INSTANCE ELEMENT_ACTIVATING USER_TASK review",
        "JOB CREATED",
        "PROCESS_INSTANCE ELEMENT_ACTIVATED USER_TASK review",
    ]);
    harness
        .records()
        .with_value_type(ValueType::UserTask)
        .expect_none();
    let (key, job) = harness.activate_job("io.camunda.zeebe:userTask");
    assert_eq!(job.retries, 1);
    let headers = &job.custom_headers;
    assert_eq!(headers["io.camunda.zeebe:assignee"], "alice");
    assert_eq!(
        headers["io.camunda.zeebe:candidateGroups"],
        r#"["sales","support"]"#
    );
    assert_eq!(headers["io.camunda.zeebe:dueDate"], "2023-11-20T17:30Z");
    assert_eq!(
        headers["io.camunda.zeebe:formKey"],
        "camunda-forms:bpmn:review-form"
    );
    assert_eq!(headers["kind"], "review");
    assert!(!headers.contains_key("io.camunda.zeebe:candidateUsers"));
    harness.complete_job(key, r#"{"done": 1}"#).unwrap();
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
    harness
        .records()
        .with_intent(JobIntent::Completed)
        .expect_one();
}
