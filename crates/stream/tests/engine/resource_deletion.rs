//! Deleting deployed resources: process definitions (refused while instances run), decision
//! requirements graphs with their decisions, forms; on every partition.

use beeline_protocol::intent::{
    DecisionIntent, DecisionRequirementsIntent, FormIntent, ProcessIntent, ResourceDeletionIntent,
};
use beeline_protocol::value::{DeploymentRecord, ProcessRecord, ResourceDeletionRecord};
use beeline_protocol::{Record, RecordType, RejectionType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

use crate::decisions::{DISCOUNTS, evaluate};
use crate::user_tasks::FORM;

fn delete(harness: &Harness, resource_key: i64) -> Record {
    harness
        .execute(Record::command(
            -1,
            ResourceDeletionIntent::Delete,
            ResourceDeletionRecord {
                resource_key,
                ..Default::default()
            },
        ))
        .unwrap()
}

fn process(version_marker: &str) -> ProcessBuilder {
    ProcessBuilder::new("p")
        .start_event("start")
        .service_task(version_marker, "work")
        .end_event("end")
}

fn deployed_key(answer: &Record) -> i64 {
    let deployment = answer.value_as::<DeploymentRecord>().unwrap();
    deployment.processes_metadata[0].process_definition_key
}

#[test]
fn a_process_definition_is_deleted_in_zeebes_order_and_its_version_is_not_given_again() {
    let harness = Harness::new(1);
    let key = deployed_key(&harness.deploy_process(&process("one")));
    let before = harness.records().len();
    let answer = delete(&harness, key);
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{}",
        answer.rejection_reason
    );
    assert_eq!(answer.intent, ResourceDeletionIntent::Deleting.into());
    let records = harness.records();
    assert_eq!(
        records.steps()[before..].to_vec(),
        vec![
            "RESOURCE_DELETION DELETE",
            "RESOURCE_DELETION DELETING",
            "PROCESS DELETING",
            "PROCESS DELETED",
            "RESOURCE_DELETION DELETED",
        ],
        "{}",
        records.log()
    );
    let deleted = records
        .clone()
        .with_intent(ProcessIntent::Deleted)
        .values::<ProcessRecord>()
        .remove(0);
    assert_eq!(deleted.process_definition_key, key);
    assert_eq!(deleted.bpmn_process_id, "p");
    assert!(deleted.resource.is_empty());
    let created = harness.try_create_instance("p", "{}").unwrap();
    assert_eq!(created.rejection_type, RejectionType::NotFound);
    let again = delete(&harness, key);
    assert_eq!(again.rejection_type, RejectionType::NotFound);
    assert_eq!(
        again.rejection_reason,
        format!("Expected to delete resource but no resource found with key `{key}`")
    );
    // The same resource again is a new version, never the deleted one's number.
    let redeployed = harness.deploy_process(&process("one"));
    let metadata = &redeployed
        .value_as::<DeploymentRecord>()
        .unwrap()
        .processes_metadata[0];
    assert_eq!(metadata.version, 2);
    assert!(!metadata.is_duplicate);
    harness.create_instance("p", "{}");
}

#[test]
fn deleting_the_latest_version_falls_back_to_the_one_before_with_its_start_events() {
    let harness = Harness::new(1);
    let with_timer = |task: &str| {
        ProcessBuilder::new("p")
            .start_event_with("tick", &timer("timeCycle", "R/PT1H"))
            .service_task(task, task)
            .end_event("end")
    };
    let first = deployed_key(&harness.deploy_process(&with_timer("first")));
    let second = deployed_key(&harness.deploy_process(&with_timer("second")));
    assert_ne!(first, second);
    let answer = delete(&harness, second);
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{}",
        answer.rejection_reason
    );
    harness.records().expect_subsequence(&[
        "RESOURCE_DELETION DELETING",
        "PROCESS DELETING",
        "TIMER CANCELED",
        "TIMER CREATED",
        "PROCESS DELETED",
        "RESOURCE_DELETION DELETED",
    ]);
    // The first version's timer starts instances again; the deleted one's is gone.
    harness.advance_time(3_600_000);
    assert_eq!(harness.activate_jobs("first", 10).len(), 1);
    assert!(harness.activate_jobs("second", 10).is_empty());
}

#[test]
fn a_process_with_running_instances_is_not_deleted_until_they_end() {
    let harness = Harness::new(1);
    let key = deployed_key(&harness.deploy_process(&process("one")));
    harness.create_instance("p", "{}");
    let before = harness.records().len();
    let refused = delete(&harness, key);
    assert_eq!(refused.record_type, RecordType::CommandRejection);
    assert_eq!(refused.rejection_type, RejectionType::InvalidState);
    assert_eq!(
        refused.rejection_reason,
        format!(
            "Expected to delete resource with key `{key}` but there are still running instances"
        )
    );
    // Rolled back: the command and its rejection, nothing else; the process still starts.
    assert_eq!(harness.records().len(), before + 2);
    harness.create_instance("p", "{}");
    for _ in 0..2 {
        let (job, _) = harness.activate_job("work");
        harness.complete_job(job, "{}").unwrap();
    }
    let deleted = delete(&harness, key);
    assert_eq!(
        deleted.record_type,
        RecordType::Event,
        "{}",
        deleted.rejection_reason
    );
}

#[test]
fn a_decision_requirements_graph_is_deleted_with_its_decisions() {
    let harness = Harness::new(1);
    let deployed = harness.deploy("discounts.dmn", DISCOUNTS).unwrap();
    let graph = deployed
        .value_as::<DeploymentRecord>()
        .unwrap()
        .decision_requirements_metadata[0]
        .decision_requirements_key;
    let before = harness.records().len();
    let answer = delete(&harness, graph);
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{}",
        answer.rejection_reason
    );
    assert_eq!(
        harness.records().steps()[before..].to_vec(),
        vec![
            "RESOURCE_DELETION DELETE",
            "RESOURCE_DELETION DELETING",
            "DECISION DELETED",
            "DECISION DELETED",
            "DECISION_REQUIREMENTS DELETED",
            "RESOURCE_DELETION DELETED",
        ]
    );
    harness
        .records()
        .with_intent(DecisionIntent::Deleted)
        .expect_count(2);
    harness
        .records()
        .with_intent(DecisionRequirementsIntent::Deleted)
        .expect_one();
    let evaluated = evaluate(&harness, "discount", r#"{"tier": "gold"}"#);
    assert_eq!(evaluated.record_type, RecordType::CommandRejection);
    // Redeployed, the graph and its decisions get new versions.
    let again = harness.deploy("discounts.dmn", DISCOUNTS).unwrap();
    let again = again.value_as::<DeploymentRecord>().unwrap();
    assert_eq!(
        again.decision_requirements_metadata[0].decision_requirements_version,
        2
    );
    assert!(again.decisions_metadata.iter().all(|d| d.version == 2));
}

#[test]
fn a_form_is_deleted() {
    let harness = Harness::new(1);
    let deployed = harness.deploy("approval.form", FORM).unwrap();
    let form = deployed
        .value_as::<DeploymentRecord>()
        .unwrap()
        .form_metadata[0]
        .form_key;
    let answer = delete(&harness, form);
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{}",
        answer.rejection_reason
    );
    harness
        .records()
        .with_intent(FormIntent::Deleted)
        .expect_one();
    let again = harness.deploy("approval.form", FORM).unwrap();
    assert_eq!(
        again.value_as::<DeploymentRecord>().unwrap().form_metadata[0].version,
        2
    );
}

#[test]
fn a_deletion_reaches_every_partition() {
    let harness = Harness::new(2);
    let key = deployed_key(&harness.deploy_process(&process("one")));
    harness.settle();
    let answer = delete(&harness, key);
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{}",
        answer.rejection_reason
    );
    harness.settle();
    let second = harness.records_of(2);
    second.expect_subsequence(&[
        "RESOURCE_DELETION DELETE",
        "RESOURCE_DELETION DELETING",
        "PROCESS DELETING",
        "PROCESS DELETED",
        "RESOURCE_DELETION DELETED",
    ]);
    let created = harness.try_create_instance("p", "{}").unwrap();
    assert_eq!(created.rejection_type, RejectionType::NotFound);
    harness
        .records_of(1)
        .with_intent(beeline_protocol::intent::CommandDistributionIntent::Acknowledged)
        .expect_count(2);
}
