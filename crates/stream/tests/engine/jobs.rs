use beeline_protocol::intent::{IncidentIntent, JobIntent, ProcessInstanceIntent as PI};
use beeline_protocol::value::{IncidentRecord, JobRecord};
use beeline_protocol::{RecordType, RejectionType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

use crate::json;

fn one_task(harness: &Harness) -> i64 {
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task_with(
                "task",
                "work",
                r#"<zeebe:taskHeaders><zeebe:header key="region" value="EU"/></zeebe:taskHeaders>"#,
            )
            .end_event("e"),
    );
    harness.create_instance("p", r#"{"order": {"id": 7}, "total": 12.5}"#)
}

#[test]
fn a_service_task_creates_a_job_with_type_retries_headers_and_variables() {
    let harness = Harness::new(1);
    let instance = one_task(&harness);
    let created = harness
        .records()
        .with_intent(JobIntent::Created)
        .expect_one();
    let job = created.value_as::<JobRecord>().unwrap();
    assert_eq!((job.r#type.as_str(), job.retries), ("work", 3));
    assert_eq!(
        job.custom_headers.get("region").map(String::as_str),
        Some("EU")
    );
    assert_eq!(job.process_instance_key, instance);
    assert_eq!(job.element_id, "task");
    let (key, activated) = harness.activate_job("work");
    assert_eq!(key, created.key);
    assert_eq!(activated.worker, "test-worker");
    assert_eq!(
        activated.deadline,
        beeline_stream::testkit::START_TIME + 60_000
    );
    assert_eq!(
        json(&activated.variables),
        serde_json::json!({"order": {"id": 7}, "total": 12.5})
    );
    assert!(
        harness.activate_jobs("work", 5).is_empty(),
        "an activated job is not handed out twice"
    );
}

#[test]
fn completing_a_job_completes_the_task_with_its_variables() {
    let harness = Harness::new(1);
    let instance = one_task(&harness);
    let (key, _) = harness.activate_job("work");
    let completed = harness.complete_job(key, r#"{"paid": true}"#).unwrap();
    assert_eq!(completed.intent, JobIntent::Completed.into());
    let records = harness.records().of_instance(instance);
    records
        .clone()
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    let again = harness.complete_job(key, "{}").unwrap();
    assert_eq!(again.rejection_type, RejectionType::NotFound);
    assert_eq!(
        again.rejection_reason,
        format!("Expected to complete job with key '{key}', but no such job was found")
    );
}

#[test]
fn a_failed_job_with_retries_comes_back_and_without_raises_an_incident() {
    let harness = Harness::new(1);
    one_task(&harness);
    let (key, _) = harness.activate_job("work");
    let failed = harness.fail_job(key, 2, "flaky", 0).unwrap();
    assert_eq!(failed.value_as::<JobRecord>().unwrap().retries, 2);
    let (again, job) = harness.activate_job("work");
    assert_eq!((again, job.retries), (key, 2));
    harness.fail_job(key, 0, "broken for good", 0).unwrap();
    assert!(harness.activate_jobs("work", 1).is_empty());
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap().clone();
    assert_eq!(
        (
            value.error_type.as_str(),
            value.error_message.as_str(),
            value.job_key
        ),
        ("JOB_NO_RETRIES", "broken for good", key)
    );

    let refused = harness.resolve_incident(incident.key).unwrap();
    assert_eq!(
        refused.rejection_type,
        RejectionType::InvalidState,
        "no retries yet"
    );
    harness.update_retries(key, 1).unwrap();
    harness.resolve_incident(incident.key).unwrap();
    let (back, job) = harness.activate_job("work");
    assert_eq!((back, job.retries), (key, 1));
}

#[test]
fn a_retry_back_off_delays_the_job() {
    let harness = Harness::new(1);
    one_task(&harness);
    let (key, _) = harness.activate_job("work");
    harness.fail_job(key, 2, "later", 30_000).unwrap();
    assert!(
        harness.activate_jobs("work", 1).is_empty(),
        "not during the back-off"
    );
    harness.advance_time(29_999);
    assert!(harness.activate_jobs("work", 1).is_empty());
    harness.advance_time(1);
    harness
        .records()
        .with_intent(JobIntent::RecurredAfterBackoff)
        .expect_one();
    assert_eq!(harness.activate_job("work").0, key);
}

#[test]
fn an_activated_job_times_out_and_can_be_given_more_time() {
    let harness = Harness::new(1);
    one_task(&harness);
    let (key, _) = harness.activate_job("work");
    harness.update_timeout(key, 120_000).unwrap();
    harness.advance_time(60_000);
    assert!(
        harness.activate_jobs("work", 1).is_empty(),
        "the new deadline holds"
    );
    harness.advance_time(60_000);
    harness
        .records()
        .with_intent(JobIntent::TimedOut)
        .expect_one();
    assert_eq!(harness.activate_job("work").0, key);
}

#[test]
fn an_update_changes_retries_and_timeout_at_once_or_not_at_all() {
    let harness = Harness::new(1);
    one_task(&harness);
    let (key, _) = harness.activate_job("work");
    let updated = harness.update_job(key, Some(7), Some(120_000)).unwrap();
    assert_eq!(updated.intent, JobIntent::Updated.into());
    let written = harness.records().with_key(key).events().intents();
    assert!(
        written.ends_with(&[
            JobIntent::RetriesUpdated.into(),
            JobIntent::TimeoutUpdated.into(),
            JobIntent::Updated.into()
        ]),
        "{written:?}"
    );
    let job = updated.value_as::<JobRecord>().unwrap();
    assert_eq!(job.retries, 7);
    assert_eq!(job.timeout, 120_000);
    assert_eq!(job.deadline, updated.timestamp + 120_000);
    harness.advance_time(60_000);
    assert!(
        harness.activate_jobs("work", 1).is_empty(),
        "the new deadline holds"
    );

    // One bad change refuses the whole update: the retries stay as they were.
    let refused = harness.update_job(key, Some(0), Some(1_000)).unwrap();
    assert_eq!(refused.rejection_type, RejectionType::InvalidArgument);
    assert!(
        refused
            .rejection_reason
            .contains("positive amount of retries")
    );
    harness.fail_job(key, 0, "stop", 0).unwrap();
    let not_activated = harness.update_job(key, Some(2), Some(1_000)).unwrap();
    assert_eq!(not_activated.rejection_type, RejectionType::InvalidArgument);
    assert!(
        not_activated.rejection_reason.contains("in state 'FAILED'"),
        "{}",
        not_activated.rejection_reason
    );
    let retries = harness.update_job(key, Some(2), None).unwrap();
    assert_eq!(retries.value_as::<JobRecord>().unwrap().retries, 2);
    let unknown = harness
        .update_job(2_251_799_813_699_999, Some(1), None)
        .unwrap();
    assert_eq!(unknown.rejection_type, RejectionType::NotFound);
}

#[test]
fn an_error_thrown_by_a_worker_is_an_incident_while_nothing_catches_it() {
    let harness = Harness::new(1);
    one_task(&harness);
    let (key, _) = harness.activate_job("work");
    let thrown = harness
        .throw_error(key, "NO_STOCK", "out of stock")
        .unwrap();
    assert_eq!(thrown.intent, JobIntent::ErrorThrown.into());
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "UNHANDLED_ERROR_EVENT");
    assert_eq!(
        value.error_message,
        "Expected to throw an error event with the code 'NO_STOCK' with message 'out of stock', but it was not caught. No error events are available in the scope."
    );
}

#[test]
fn job_commands_for_unknown_or_wrong_state_jobs_are_rejected() {
    let harness = Harness::new(1);
    one_task(&harness);
    let unknown = harness.fail_job(2_251_799_813_699_999, 1, "", 0).unwrap();
    assert_eq!(unknown.rejection_type, RejectionType::NotFound);
    let (key, _) = harness.activate_job("work");
    harness.fail_job(key, 0, "stop", 0).unwrap();
    let wrong = harness.complete_job(key, "{}").unwrap();
    assert_eq!(wrong.record_type, RecordType::CommandRejection);
    assert_eq!(wrong.rejection_type, RejectionType::InvalidState);
    assert!(
        wrong.rejection_reason.contains("in state 'FAILED'"),
        "{}",
        wrong.rejection_reason
    );
    let zero = harness.update_retries(key, 0).unwrap();
    assert_eq!(zero.rejection_type, RejectionType::InvalidArgument);
}

#[test]
fn job_types_and_retries_can_be_expressions() {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task_retries("task", "=\"work-\" + region", "=attempts * 2")
            .end_event("e"),
    );
    harness.create_instance("p", r#"{"region": "eu", "attempts": 2}"#);
    let (_, job) = harness.activate_job("work-eu");
    assert_eq!(job.retries, 4);
    harness.create_instance("p", r#"{"attempts": 2}"#);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    assert_eq!(
        incident.value_as::<IncidentRecord>().unwrap().error_type,
        "EXTRACT_VALUE_ERROR"
    );
}
