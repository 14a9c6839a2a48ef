//! User task listeners: jobs of kind TASK_LISTENER that run, one after another, while a
//! Camunda user task's transition (creating, assigning, updating, completing, canceling) is
//! under way; their corrections and denials, the request that waits for them, their
//! incidents, and the job completions Zeebe refuses.

use beeline_protocol::intent::{
    IncidentIntent, JobIntent, ProcessInstanceIntent as PI, UserTaskIntent, VariableDocumentIntent,
};
use beeline_protocol::value::{
    IncidentRecord, JobRecord, JobResult, JobResultCorrections, UserTaskRecord,
    VariableDocumentRecord,
};
use beeline_protocol::{Record, RecordType, RejectionType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

/// `start -> review (a Camunda user task with `extensions` and the listeners
/// `(eventType, type)`) -> end`.
fn review(extensions: &str, listeners: &[(&str, &str)]) -> ProcessBuilder {
    let listeners: String = listeners
        .iter()
        .map(|(event, job_type)| {
            format!(
                r#"<zeebe:taskListener eventType="{event}" type="{}" retries="2"/>"#,
                job_type.replace('"', "&quot;")
            )
        })
        .collect();
    ProcessBuilder::new("p")
        .start_event("start")
        .user_task(
            "review",
            true,
            &format!("{extensions}<zeebe:taskListeners>{listeners}</zeebe:taskListeners>"),
        )
        .end_event("end")
}

/// The steps of the log, with a job's type after its intent (`"JOB CREATED check"`), for
/// events.
fn expect_steps(harness: &Harness, expected: &[&str]) {
    let records = harness.records();
    let steps: Vec<String> = records
        .steps()
        .into_iter()
        .zip(records.list())
        .map(|(step, record)| match record.value_as::<JobRecord>() {
            Some(job) if !job.r#type.is_empty() => format!("{step} {}", job.r#type),
            _ => step,
        })
        .collect();
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

fn created_task(harness: &Harness) -> i64 {
    harness
        .records()
        .with_intent(UserTaskIntent::Created)
        .expect_one()
        .key
}

fn task_of(record: &Record) -> UserTaskRecord {
    record.value_as::<UserTaskRecord>().unwrap().clone()
}

fn last(harness: &Harness, intent: UserTaskIntent) -> UserTaskRecord {
    let records = harness.records().with_intent(intent);
    task_of(records.list().last().expect("a record with that intent"))
}

fn expect_event(answer: Record) -> Record {
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{} {}",
        answer.rejection_type.name(),
        answer.rejection_reason
    );
    answer
}

/// A USER_TASK command sent without waiting for its answer.
fn submit(
    harness: &Harness,
    key: i64,
    intent: UserTaskIntent,
    task: UserTaskRecord,
) -> beeline_stream::testkit::PendingAnswer {
    harness.submit(1, Record::command(key, intent, task))
}

fn corrections(attributes: &[&str], corrections: JobResultCorrections) -> JobResult {
    JobResult {
        r#type: "USER_TASK".into(),
        corrected_attributes: attributes.iter().map(|a| a.to_string()).collect(),
        corrections: Some(corrections),
        ..JobResult::default()
    }
}

fn denial(reason: &str) -> JobResult {
    JobResult {
        r#type: "USER_TASK".into(),
        denied: true,
        denied_reason: reason.into(),
        ..JobResult::default()
    }
}

#[test]
fn completing_listeners_run_before_the_task_completes_and_the_request_waits_for_them() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:taskHeaders><zeebe:header key="kind" value="review"/></zeebe:taskHeaders>"#,
        &[("completing", "check"), ("completing", "archive")],
    ));
    let instance = harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let mut answer = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord {
            variables: br#"{"approved": true}"#.to_vec(),
            ..UserTaskRecord::default()
        },
    );
    let (check, job) = harness.activate_job("check");
    assert_eq!(job.job_kind, "TASK_LISTENER");
    assert_eq!(job.job_listener_event_type, "COMPLETING");
    assert_eq!(job.retries, 2);
    assert_eq!(job.custom_headers["io.camunda.zeebe:action"], "complete");
    assert_eq!(
        job.custom_headers["io.camunda.zeebe:userTaskKey"],
        key.to_string()
    );
    assert_eq!(job.custom_headers["io.camunda.zeebe:priority"], "50");
    assert_eq!(
        job.custom_headers["kind"], "review",
        "the task's own headers"
    );
    assert!(
        answer.try_take().is_none(),
        "the request waits for the listeners"
    );
    expect_event(harness.complete_job(check, "").unwrap());
    let (archive, _) = harness.activate_job("archive");
    assert!(answer.try_take().is_none());
    expect_event(harness.complete_job(archive, "").unwrap());
    let answered = expect_event(answer.wait(&harness).unwrap());
    assert_eq!(answered.intent, UserTaskIntent::Completed.into());
    expect_steps(
        &harness,
        &[
            "USER_TASK COMPLETE",
            "USER_TASK COMPLETING",
            "JOB CREATED check",
            "JOB COMPLETED check",
            "USER_TASK COMPLETE_TASK_LISTENER",
            "JOB CREATED archive",
            "JOB COMPLETED archive",
            "USER_TASK COMPLETE_TASK_LISTENER",
            "USER_TASK COMPLETED",
            "PROCESS_INSTANCE COMPLETE_ELEMENT USER_TASK review",
            "PROCESS_INSTANCE ELEMENT_COMPLETING USER_TASK review",
            "VARIABLE CREATED approved",
            "PROCESS_INSTANCE ELEMENT_COMPLETED USER_TASK review",
            "PROCESS_INSTANCE ELEMENT_COMPLETED PROCESS p",
        ],
    );
    assert_eq!(
        crate::json(&last(&harness, UserTaskIntent::Completed).variables)["approved"],
        true
    );
    harness
        .records()
        .with_key(instance)
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn creating_listeners_correct_the_new_task_and_assigning_listeners_run_for_the_models_assignee() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:assignmentDefinition assignee="=owner"/>"#,
        &[("creating", "prepare"), ("assigning", "notify")],
    ));
    harness.create_instance("p", r#"{"owner": "alice"}"#);
    let (prepare, job) = harness.activate_job("prepare");
    assert_eq!(job.job_listener_event_type, "CREATING");
    assert_eq!(
        job.custom_headers["io.camunda.zeebe:assignee"], "alice",
        "a creating listener sees the assignee the model gives"
    );
    harness
        .records()
        .with_intent(UserTaskIntent::Created)
        .expect_none();
    harness
        .records()
        .with_element("review")
        .with_intent(PI::ElementActivated)
        .expect_one();
    expect_event(
        harness
            .complete_job_with_result(
                prepare,
                corrections(
                    &["priority", "dueDate"],
                    JobResultCorrections {
                        priority: 80,
                        due_date: "2030-01-01T10:00:00Z".into(),
                        ..JobResultCorrections::default()
                    },
                ),
            )
            .unwrap(),
    );
    let (notify, job) = harness.activate_job("notify");
    assert_eq!(job.job_listener_event_type, "ASSIGNING");
    assert_eq!(job.custom_headers["io.camunda.zeebe:assignee"], "alice");
    assert_eq!(
        job.custom_headers["io.camunda.zeebe:changedAttributes"],
        r#"["assignee"]"#
    );
    assert_eq!(job.custom_headers["io.camunda.zeebe:priority"], "80");
    expect_event(harness.complete_job(notify, "").unwrap());
    expect_steps(
        &harness,
        &[
            "PROCESS_INSTANCE ELEMENT_ACTIVATING USER_TASK review",
            "USER_TASK CREATING",
            "JOB CREATED prepare",
            "PROCESS_INSTANCE ELEMENT_ACTIVATED USER_TASK review",
            "JOB COMPLETED prepare",
            "USER_TASK COMPLETE_TASK_LISTENER",
            "USER_TASK CORRECTED",
            "USER_TASK CREATED",
            "USER_TASK ASSIGNING",
            "JOB CREATED notify",
            "JOB COMPLETED notify",
            "USER_TASK COMPLETE_TASK_LISTENER",
            "USER_TASK ASSIGNED",
        ],
    );
    let corrected = last(&harness, UserTaskIntent::Corrected);
    assert_eq!(corrected.changed_attributes, vec!["priority", "dueDate"]);
    let created = last(&harness, UserTaskIntent::Created);
    assert_eq!(created.priority, 80);
    assert_eq!(created.due_date, "2030-01-01T10:00:00Z");
    assert_eq!(created.assignee, "", "CREATED comes without the assignee");
    let assigned = last(&harness, UserTaskIntent::Assigned);
    assert_eq!(assigned.assignee, "alice");
    assert_eq!(assigned.priority, 80);
}

#[test]
fn assigning_listeners_correct_the_assignment_and_later_listeners_see_the_corrections() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:priorityDefinition priority="42"/>"#,
        &[("assigning", "first"), ("assigning", "second")],
    ));
    harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Assign,
        UserTaskRecord {
            assignee: "merry".into(),
            ..UserTaskRecord::default()
        },
    );
    let (first, job) = harness.activate_job("first");
    assert_eq!(
        job.custom_headers["io.camunda.zeebe:changedAttributes"],
        r#"["assignee"]"#
    );
    assert_eq!(job.custom_headers["io.camunda.zeebe:action"], "assign");
    expect_event(
        harness
            .complete_job_with_result(
                first,
                corrections(
                    &["dueDate", "priority"],
                    JobResultCorrections {
                        due_date: "corrected".into(),
                        priority: 84,
                        ..JobResultCorrections::default()
                    },
                ),
            )
            .unwrap(),
    );
    let (second, job) = harness.activate_job("second");
    assert_eq!(
        job.custom_headers["io.camunda.zeebe:changedAttributes"],
        r#"["assignee","dueDate","priority"]"#
    );
    assert_eq!(job.custom_headers["io.camunda.zeebe:dueDate"], "corrected");
    // Back to the priority it had: no longer a change.
    expect_event(
        harness
            .complete_job_with_result(
                second,
                corrections(
                    &["priority", "candidateGroupsList"],
                    JobResultCorrections {
                        priority: 42,
                        candidate_groups_list: vec!["hobbits".into()],
                        ..JobResultCorrections::default()
                    },
                ),
            )
            .unwrap(),
    );
    let answered = expect_event(answer.wait(&harness).unwrap());
    assert_eq!(answered.intent, UserTaskIntent::Assigned.into());
    let assigned = last(&harness, UserTaskIntent::Assigned);
    assert_eq!(assigned.assignee, "merry");
    assert_eq!(assigned.due_date, "corrected");
    assert_eq!(assigned.priority, 42);
    assert_eq!(assigned.candidate_groups_list, vec!["hobbits"]);
    assert_eq!(
        assigned.changed_attributes,
        vec!["assignee", "candidateGroupsList", "dueDate"],
        "what differs from the task before the assignment"
    );
    assert_eq!(assigned.action, "assign");
    let corrected: Vec<Vec<String>> = harness
        .records()
        .with_intent(UserTaskIntent::Corrected)
        .values::<UserTaskRecord>()
        .into_iter()
        .map(|t| t.changed_attributes)
        .collect();
    assert_eq!(
        corrected,
        vec![
            vec!["dueDate".to_string(), "priority".to_string()],
            vec!["priority".to_string(), "candidateGroupsList".to_string()],
        ]
    );
}

#[test]
fn a_completing_listener_denies_the_completion_and_the_task_stays_open() {
    let harness = Harness::new(1);
    harness.deploy_process(&review("", &[("completing", "validate")]));
    harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord::default(),
    );
    let (validate, _) = harness.activate_job("validate");
    expect_event(
        harness
            .complete_job_with_result(validate, denial("missing signature"))
            .unwrap(),
    );
    let rejected = answer.wait(&harness).unwrap();
    assert_eq!(rejected.record_type, RecordType::CommandRejection);
    assert_eq!(rejected.rejection_type, RejectionType::InvalidState);
    assert_eq!(
        rejected.rejection_reason,
        format!(
            "Completion of the User Task with key '{key}' was denied by Task Listener. Reason to deny: 'missing signature'"
        )
    );
    expect_steps(
        &harness,
        &[
            "USER_TASK COMPLETING",
            "JOB CREATED validate",
            "JOB COMPLETED validate",
            "USER_TASK DENY_TASK_LISTENER",
            "USER_TASK COMPLETION_DENIED",
        ],
    );
    assert_eq!(
        last(&harness, UserTaskIntent::CompletionDenied).denied_reason,
        "missing signature"
    );
    harness
        .records()
        .with_element("review")
        .with_intent(PI::ElementCompleting)
        .expect_none();
    // The task is open again: a second completion runs the listener again.
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord::default(),
    );
    let (validate, _) = harness.activate_job("validate");
    expect_event(harness.complete_job(validate, "").unwrap());
    expect_event(answer.wait(&harness).unwrap());
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

#[test]
fn an_updating_listener_denies_the_update_and_the_task_keeps_its_attributes() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:priorityDefinition priority="10"/>"#,
        &[("updating", "guard")],
    ));
    harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Update,
        UserTaskRecord {
            priority: 99,
            changed_attributes: vec!["priority".into()],
            ..UserTaskRecord::default()
        },
    );
    let (guard, job) = harness.activate_job("guard");
    assert_eq!(
        job.custom_headers["io.camunda.zeebe:priority"], "99",
        "the task as it will be"
    );
    expect_event(harness.complete_job_with_result(guard, denial("")).unwrap());
    let rejected = answer.wait(&harness).unwrap();
    assert_eq!(rejected.rejection_type, RejectionType::InvalidState);
    assert!(
        rejected
            .rejection_reason
            .starts_with("Update of the User Task")
    );
    let denied = last(&harness, UserTaskIntent::UpdateDenied);
    assert_eq!(denied.priority, 10);
    // Updated again without the listener denying: UPDATED with the new priority.
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Update,
        UserTaskRecord {
            priority: 99,
            changed_attributes: vec!["priority".into()],
            ..UserTaskRecord::default()
        },
    );
    let (guard, _) = harness.activate_job("guard");
    expect_event(harness.complete_job(guard, "").unwrap());
    expect_event(answer.wait(&harness).unwrap());
    let updated = last(&harness, UserTaskIntent::Updated);
    assert_eq!(updated.priority, 99);
    assert_eq!(updated.changed_attributes, vec!["priority"]);
}

#[test]
fn task_listener_job_completions_that_zeebe_refuses_are_rejected() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        r#"<zeebe:assignmentDefinition assignee="alice"/>"#,
        &[("creating", "prepare")],
    ));
    let instance = harness.create_instance("p", "{}");
    let (prepare, _) = harness.activate_job("prepare");
    let refused = |answer: Record| {
        assert_eq!(answer.record_type, RecordType::CommandRejection);
        assert_eq!(answer.rejection_type, RejectionType::InvalidArgument);
        answer.rejection_reason
    };
    let what = format!("(job key '{prepare}', type 'prepare', processInstanceKey '{instance}')");
    assert_eq!(
        refused(harness.complete_job(prepare, r#"{"a": 1}"#).unwrap()),
        format!(
            "Task Listener job completion with variables payload provided is not yet supported {what}. Support will be enabled with the resolution of issue #23702."
        )
    );
    assert_eq!(
        refused(
            harness
                .complete_job_with_result(prepare, denial("no"))
                .unwrap()
        ),
        format!(
            "Denying result is not supported for 'CREATING' task listener jobs {what}. Only the following listener event types support denying: [ASSIGNING, COMPLETING, UPDATING]."
        )
    );
    assert_eq!(
        refused(
            harness
                .complete_job_with_result(
                    prepare,
                    corrections(
                        &["assignee"],
                        JobResultCorrections {
                            assignee: "bob".into(),
                            ..JobResultCorrections::default()
                        }
                    )
                )
                .unwrap()
        ),
        format!(
            "Expected to complete task listener job, but correcting the assignee on 'CREATING' event is not supported when the user task has an assignee defined in the model {what}. Use the 'CREATING' event to set an assignee only if it was not defined. Use the 'ASSIGNING' event to correct an assignee that is already defined."
        )
    );
    assert_eq!(
        refused(
            harness
                .complete_job_with_result(
                    prepare,
                    corrections(&["formKey"], JobResultCorrections::default())
                )
                .unwrap()
        ),
        format!(
            "Expected to complete task listener job with a corrections result, but property 'formKey' cannot be corrected {what}. Only the following properties can be corrected: [assignee, candidateGroupsList, candidateUsersList, dueDate, followUpDate, priority]."
        )
    );
    let mut both = denial("no");
    both.corrected_attributes = vec!["priority".into()];
    // Denying is checked first for a creating listener; an assigning one sees the other rule.
    assert!(
        refused(harness.complete_job_with_result(prepare, both).unwrap())
            .starts_with("Denying result is not supported")
    );
    expect_event(harness.complete_job(prepare, "").unwrap());
    harness
        .records()
        .with_intent(UserTaskIntent::Assigned)
        .expect_one();
}

#[test]
fn denying_with_corrections_is_refused() {
    let harness = Harness::new(1);
    harness.deploy_process(&review("", &[("completing", "validate")]));
    let instance = harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let _answer = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord::default(),
    );
    let (validate, _) = harness.activate_job("validate");
    let mut both = denial("no");
    both.corrected_attributes = vec!["priority".into()];
    let answer = harness.complete_job_with_result(validate, both).unwrap();
    assert_eq!(answer.rejection_type, RejectionType::InvalidArgument);
    assert_eq!(
        answer.rejection_reason,
        format!(
            "Expected to complete task listener job with corrections, but the job result is denied (job key '{validate}', type 'validate', processInstanceKey '{instance}'). The corrections would be reverted by the denial. Either complete the job with corrections without setting denied, or complete the job with a denied result but no corrections."
        )
    );
}

#[test]
fn canceling_listeners_run_before_the_element_is_terminated() {
    let harness = Harness::new(1);
    harness.deploy_process(&review("", &[("canceling", "clean-up")]));
    let instance = harness.create_instance("p", "{}");
    let key = created_task(&harness);
    harness.cancel_instance(instance).unwrap();
    let (clean_up, job) = harness.activate_job("clean-up");
    assert_eq!(job.job_listener_event_type, "CANCELING");
    harness
        .records()
        .with_element("review")
        .with_intent(PI::ElementTerminated)
        .expect_none();
    expect_event(
        harness
            .complete_job_with_result(
                clean_up,
                corrections(
                    &["assignee"],
                    JobResultCorrections {
                        assignee: "nobody".into(),
                        ..JobResultCorrections::default()
                    },
                ),
            )
            .unwrap(),
    );
    expect_steps(
        &harness,
        &[
            "PROCESS_INSTANCE ELEMENT_TERMINATING USER_TASK review",
            "USER_TASK CANCELING",
            "JOB CREATED clean-up",
            "JOB COMPLETED clean-up",
            "USER_TASK COMPLETE_TASK_LISTENER",
            "USER_TASK CORRECTED",
            "USER_TASK CANCELED",
            "PROCESS_INSTANCE CONTINUE_TERMINATING_ELEMENT USER_TASK review",
            "PROCESS_INSTANCE ELEMENT_TERMINATED USER_TASK review",
            "PROCESS_INSTANCE ELEMENT_TERMINATED PROCESS p",
        ],
    );
    let canceled = last(&harness, UserTaskIntent::Canceled);
    assert_eq!(canceled.user_task_key, key);
    assert_eq!(canceled.assignee, "nobody");
}

#[test]
fn an_interrupting_event_cuts_a_waiting_completion_short() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &review("", &[("completing", "validate")])
            .boundary_event("late", "review", &timer("timeDuration", "PT1M"), true)
            .end_event("late-end"),
    );
    harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord::default(),
    );
    let (validate, _) = harness.activate_job("validate");
    harness.advance_time(60_000);
    let rejected = answer.wait(&harness).unwrap();
    assert_eq!(rejected.rejection_type, RejectionType::InvalidState);
    harness
        .records()
        .with_key(validate)
        .with_intent(JobIntent::Canceled)
        .expect_one();
    expect_steps(
        &harness,
        &[
            "USER_TASK COMPLETING",
            "PROCESS_INSTANCE ELEMENT_TERMINATING USER_TASK review",
            "JOB CANCELED validate",
            "USER_TASK CANCELING",
            "USER_TASK CANCELED",
            "PROCESS_INSTANCE ELEMENT_TERMINATED USER_TASK review",
            "PROCESS_INSTANCE ELEMENT_COMPLETED END_EVENT late-end",
        ],
    );
}

#[test]
fn a_listener_out_of_retries_is_an_incident_and_only_it_runs_again() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        "",
        &[("completing", "first"), ("completing", "second")],
    ));
    harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord::default(),
    );
    let (first, _) = harness.activate_job("first");
    expect_event(harness.complete_job(first, "").unwrap());
    let (second, _) = harness.activate_job("second");
    expect_event(harness.fail_job(second, 0, "down", 0).unwrap());
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "TASK_LISTENER_NO_RETRIES");
    assert_eq!(value.job_key, second);
    expect_event(harness.update_retries(second, 1).unwrap());
    expect_event(harness.resolve_incident(incident.key).unwrap());
    let (again, _) = harness.activate_job("second");
    assert_eq!(again, second);
    expect_event(harness.complete_job(second, "").unwrap());
    expect_event(answer.wait(&harness).unwrap());
    assert_eq!(
        harness
            .records()
            .with_intent(JobIntent::Created)
            .values::<JobRecord>()
            .iter()
            .filter(|j| j.r#type == "first")
            .count(),
        1
    );
}

#[test]
fn a_listener_whose_type_fails_is_an_incident_and_the_transition_runs_its_listeners_again() {
    let harness = Harness::new(1);
    harness.deploy_process(&review(
        "",
        &[("completing", "first"), ("completing", "= kind")],
    ));
    let instance = harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let answer = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord::default(),
    );
    let (first, _) = harness.activate_job("first");
    expect_event(harness.complete_job(first, "").unwrap());
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(value.error_type, "EXTRACT_VALUE_ERROR");
    assert_eq!(value.element_id, "review");
    assert_eq!(value.job_key, -1);
    harness
        .set_variables(instance, r#"{"kind": "second"}"#, false)
        .unwrap();
    expect_event(harness.resolve_incident(incident.key).unwrap());
    let (first, _) = harness.activate_job("first");
    expect_event(harness.complete_job(first, "").unwrap());
    let (second, _) = harness.activate_job("second");
    expect_event(harness.complete_job(second, "").unwrap());
    let answered = expect_event(answer.wait(&harness).unwrap());
    assert_eq!(answered.intent, UserTaskIntent::Completed.into());
    harness
        .records()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
}

fn variables_command(scope: i64, variables: &str) -> Record {
    Record::command(
        -1,
        VariableDocumentIntent::Update,
        VariableDocumentRecord {
            scope_key: scope,
            update_semantics: "PROPAGATE".into(),
            variables: variables.as_bytes().to_vec(),
            ..VariableDocumentRecord::default()
        },
    )
}

fn element_key(harness: &Harness, element: &str) -> i64 {
    harness
        .records()
        .with_element(element)
        .with_intent(PI::ElementActivating)
        .expect_one()
        .key
}

#[test]
fn variables_set_on_a_user_task_update_it_and_go_through_its_updating_listeners() {
    let harness = Harness::new(1);
    harness.deploy_process(&review("", &[("updating", "watch")]));
    let instance = harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let scope = element_key(&harness, "review");
    let answer = harness.submit(1, variables_command(scope, r#"{"status": "APPROVED"}"#));
    let (watch, job) = harness.activate_job("watch");
    assert_eq!(job.job_listener_event_type, "UPDATING");
    assert_eq!(
        job.custom_headers["io.camunda.zeebe:changedAttributes"],
        r#"["variables"]"#
    );
    expect_event(
        harness
            .complete_job_with_result(
                watch,
                corrections(
                    &["dueDate"],
                    JobResultCorrections {
                        due_date: "2030-02-01T00:00:00Z".into(),
                        ..JobResultCorrections::default()
                    },
                ),
            )
            .unwrap(),
    );
    let answered = expect_event(answer.wait(&harness).unwrap());
    assert_eq!(answered.intent, VariableDocumentIntent::Updated.into());
    expect_steps(
        &harness,
        &[
            "VARIABLE_DOCUMENT UPDATE",
            "VARIABLE_DOCUMENT UPDATING",
            "USER_TASK UPDATING",
            "JOB CREATED watch",
            "JOB COMPLETED watch",
            "USER_TASK COMPLETE_TASK_LISTENER",
            "USER_TASK CORRECTED",
            "VARIABLE CREATED status",
            "USER_TASK UPDATED",
            "VARIABLE_DOCUMENT UPDATED",
        ],
    );
    let updating = last(&harness, UserTaskIntent::Updating);
    assert_eq!(updating.changed_attributes, vec!["variables"]);
    let updated = last(&harness, UserTaskIntent::Updated);
    assert_eq!(updated.changed_attributes, vec!["dueDate", "variables"]);
    assert_eq!(updated.due_date, "2030-02-01T00:00:00Z");
    let status = harness
        .records()
        .with_intent(beeline_protocol::intent::VariableIntent::Created)
        .values::<beeline_protocol::value::VariableRecord>()
        .into_iter()
        .find(|v| v.name == "status")
        .unwrap();
    assert_eq!(
        status.scope_key, scope,
        "local to the task, whatever the semantics"
    );
    assert_ne!(status.scope_key, instance);
    let _ = key;
}

#[test]
fn an_updating_listener_denies_a_variable_update_and_no_variable_is_set() {
    let harness = Harness::new(1);
    harness.deploy_process(&review("", &[("updating", "watch")]));
    harness.create_instance("p", "{}");
    let scope = element_key(&harness, "review");
    let answer = harness.submit(1, variables_command(scope, r#"{"status": "REJECTED"}"#));
    let (watch, _) = harness.activate_job("watch");
    expect_event(
        harness
            .complete_job_with_result(watch, denial("frozen"))
            .unwrap(),
    );
    let rejected = answer.wait(&harness).unwrap();
    assert_eq!(rejected.rejection_type, RejectionType::InvalidState);
    assert_eq!(rejected.intent, VariableDocumentIntent::Update.into());
    assert_eq!(
        rejected.rejection_reason,
        format!(
            "Variable update for user task instance with key '{scope}' was denied by Task Listener. Reason to deny: 'frozen'"
        )
    );
    expect_steps(
        &harness,
        &["USER_TASK UPDATE_DENIED", "VARIABLE_DOCUMENT UPDATE_DENIED"],
    );
    harness
        .records()
        .with_intent(beeline_protocol::intent::VariableIntent::Created)
        .matching(|r| {
            r.value_as::<beeline_protocol::value::VariableRecord>()
                .is_some_and(|v| v.name == "status")
        })
        .expect_none();
}

#[test]
fn variables_cannot_be_set_on_a_user_task_in_a_transition() {
    let harness = Harness::new(1);
    harness.deploy_process(&review("", &[("completing", "validate")]));
    harness.create_instance("p", "{}");
    let key = created_task(&harness);
    let scope = element_key(&harness, "review");
    let _completion = submit(
        &harness,
        key,
        UserTaskIntent::Complete,
        UserTaskRecord::default(),
    );
    harness.activate_job("validate");
    let answer = harness
        .execute(variables_command(scope, r#"{"a": 1}"#))
        .unwrap();
    assert_eq!(answer.rejection_type, RejectionType::InvalidState);
    assert_eq!(
        answer.rejection_reason,
        format!(
            "Expected to trigger update transition for user task with key '{key}', but it is in state 'COMPLETING'"
        )
    );
}

#[test]
fn variables_set_on_a_user_task_without_listeners_update_it_at_once() {
    let harness = Harness::new(1);
    harness.deploy_process(&review("", &[]));
    harness.create_instance("p", "{}");
    let scope = element_key(&harness, "review");
    let answer = harness
        .execute(variables_command(scope, r#"{"a": 1}"#))
        .unwrap();
    assert_eq!(answer.intent, VariableDocumentIntent::Updated.into());
    expect_steps(
        &harness,
        &[
            "VARIABLE_DOCUMENT UPDATE",
            "VARIABLE_DOCUMENT UPDATING",
            "USER_TASK UPDATING",
            "VARIABLE CREATED a",
            "USER_TASK UPDATED",
            "VARIABLE_DOCUMENT UPDATED",
        ],
    );
}
