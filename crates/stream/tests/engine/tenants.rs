//! Tenants: what one tenant deploys, starts, publishes and broadcasts never reaches another.
//! The same process id in two tenants is two definitions with versions of their own; jobs are
//! activated for the tenants a worker names; messages, signals, decisions, called processes,
//! forms and start events stay within their tenant.

use beeline_protocol::intent::{
    DecisionEvaluationIntent, DeploymentIntent, JobBatchIntent, MessageIntent,
    ProcessInstanceCreationIntent, ProcessInstanceIntent as PI, SignalIntent,
};
use beeline_protocol::value::{
    DecisionEvaluationRecord, DeploymentRecord, DeploymentResource, JobBatchRecord, JobRecord,
    MessageRecord, ProcessInstanceCreationRecord, ProcessInstanceRecord, SignalRecord,
};
use beeline_protocol::{Record, RecordType, RejectionType, partitioning};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, message_ref, signal_ref, timer};

use crate::decisions::DISCOUNTS;

const A: &str = "tenant-a";
const B: &str = "tenant-b";

fn deploy_in(harness: &Harness, tenant: &str, resources: &[(&str, &str)]) -> DeploymentRecord {
    let answer = harness
        .execute(Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord {
                resources: resources
                    .iter()
                    .map(|(name, content)| DeploymentResource {
                        resource_name: name.to_string(),
                        resource: content.as_bytes().to_vec(),
                    })
                    .collect(),
                tenant_id: tenant.into(),
                ..Default::default()
            },
        ))
        .unwrap();
    assert_eq!(
        answer.record_type,
        RecordType::Event,
        "{}",
        answer.rejection_reason
    );
    harness.settle();
    answer.value_as::<DeploymentRecord>().unwrap().clone()
}

fn deploy_process_in(harness: &Harness, tenant: &str, process: &ProcessBuilder) -> (i32, i64) {
    let deployment = deploy_in(harness, tenant, &[("process.bpmn", &process.build())]);
    let metadata = &deployment.processes_metadata[0];
    assert_eq!(metadata.tenant_id, tenant);
    (metadata.version, metadata.process_definition_key)
}

fn try_create_in(
    harness: &Harness,
    tenant: &str,
    creation: ProcessInstanceCreationRecord,
) -> Record {
    harness
        .execute(Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            ProcessInstanceCreationRecord {
                tenant_id: tenant.into(),
                ..creation
            },
        ))
        .unwrap()
}

fn latest(process_id: &str, variables: &str) -> ProcessInstanceCreationRecord {
    ProcessInstanceCreationRecord {
        bpmn_process_id: process_id.into(),
        version: -1,
        variables: variables.as_bytes().to_vec(),
        ..Default::default()
    }
}

fn create_in(harness: &Harness, tenant: &str, process_id: &str, variables: &str) -> i64 {
    let created = try_create_in(harness, tenant, latest(process_id, variables));
    assert_eq!(
        created.record_type,
        RecordType::Event,
        "{}",
        created.rejection_reason
    );
    let created = created.value_as::<ProcessInstanceCreationRecord>().unwrap();
    assert_eq!(created.tenant_id, tenant);
    created.process_instance_key
}

fn activate(harness: &Harness, job_type: &str, tenants: &[&str]) -> Vec<JobRecord> {
    let answer = harness
        .execute(Record::command(
            -1,
            JobBatchIntent::Activate,
            JobBatchRecord {
                r#type: job_type.into(),
                worker: "w".into(),
                timeout: 60_000,
                max_jobs_to_activate: 10,
                tenant_ids: tenants.iter().map(|t| t.to_string()).collect(),
                ..Default::default()
            },
        ))
        .unwrap();
    answer.value_as::<JobBatchRecord>().unwrap().jobs.clone()
}

fn publish_in(harness: &Harness, tenant: &str, name: &str, key: &str, id: &str) -> Record {
    harness.settle();
    let partition = partitioning::message_partition(key, 2);
    harness
        .execute_on(
            partition,
            Record::command(
                -1,
                MessageIntent::Publish,
                MessageRecord {
                    name: name.into(),
                    correlation_key: key.into(),
                    time_to_live: 60_000,
                    message_id: id.into(),
                    variables: b"{}".to_vec(),
                    tenant_id: tenant.into(),
                    deadline: -1,
                },
            ),
        )
        .unwrap()
}

fn completed(harness: &Harness, instance: i64, process_id: &str) -> bool {
    !harness
        .records()
        .of_instance(instance)
        .with_element(process_id)
        .with_intent(PI::ElementCompleted)
        .is_empty()
}

/// Instances started (ELEMENT_ACTIVATED of the process element), with their tenants.
fn started(harness: &Harness, process_id: &str) -> Vec<String> {
    harness
        .records()
        .with_element(process_id)
        .with_intent(PI::ElementActivated)
        .values::<ProcessInstanceRecord>()
        .into_iter()
        .map(|v| v.tenant_id)
        .collect()
}

fn one_task() -> ProcessBuilder {
    ProcessBuilder::new("order")
        .start_event("s")
        .service_task("t", "work")
        .end_event("e")
}

#[test]
fn the_same_process_id_in_two_tenants_is_two_definitions_with_their_own_versions() {
    let harness = Harness::new(2);
    let (version_a, key_a) = deploy_process_in(&harness, A, &one_task());
    let (version_b, key_b) = deploy_process_in(&harness, B, &one_task());
    assert_eq!((version_a, version_b), (1, 1));
    assert_ne!(key_a, key_b);
    // The same resource again in A is a duplicate of A's; changed, it is A's version 2 and B
    // stays at 1.
    let again = deploy_in(&harness, A, &[("process.bpmn", &one_task().build())]);
    assert!(again.processes_metadata[0].is_duplicate);
    let (changed, _) = deploy_process_in(&harness, A, &one_task().version_tag("v2"));
    assert_eq!(changed, 2);
    let (b_again, _) = deploy_process_in(&harness, B, &one_task().version_tag("v2"));
    assert_eq!(b_again, 2, "B's versions count on their own");

    let instance_a = create_in(&harness, A, "order", "{}");
    let instance_b = create_in(&harness, B, "order", "{}");
    let definitions: Vec<(String, i32)> = [instance_a, instance_b]
        .iter()
        .map(|i| {
            let v = harness
                .records()
                .of_instance(*i)
                .with_element("order")
                .with_intent(PI::ElementActivated)
                .values::<ProcessInstanceRecord>()
                .remove(0);
            (v.tenant_id, v.version)
        })
        .collect();
    assert_eq!(
        definitions,
        vec![(A.to_string(), 2), (B.to_string(), 2)],
        "{}",
        harness.records().log()
    );

    // Another tenant finds no such process, by id or by A's key.
    let missing = try_create_in(&harness, "tenant-c", latest("order", "{}"));
    assert_eq!(missing.rejection_type, RejectionType::NotFound);
    let by_key = try_create_in(
        &harness,
        B,
        ProcessInstanceCreationRecord {
            process_definition_key: key_a,
            ..latest("", "{}")
        },
    );
    assert_eq!(by_key.rejection_type, RejectionType::NotFound);
    assert_eq!(
        by_key.rejection_reason,
        format!("Expected to find process definition with key '{key_a}', but none found")
    );
    let by_version = try_create_in(
        &harness,
        B,
        ProcessInstanceCreationRecord {
            version: 1,
            ..latest("order", "{}")
        },
    );
    assert_eq!(by_version.record_type, RecordType::Event);
    // Nothing of either tenant is the default tenant's.
    let default = try_create_in(&harness, "", latest("order", "{}"));
    assert_eq!(default.rejection_type, RejectionType::NotFound);
}

#[test]
fn workers_get_the_jobs_of_the_tenants_they_name_only() {
    let harness = Harness::new(1);
    deploy_process_in(&harness, A, &one_task());
    deploy_process_in(&harness, B, &one_task());
    create_in(&harness, A, "order", "{}");
    create_in(&harness, B, "order", "{}");
    create_in(&harness, B, "order", "{}");

    assert!(
        activate(&harness, "work", &[]).is_empty(),
        "no tenant named: the default tenant's jobs, of which there are none"
    );
    assert!(activate(&harness, "work", &["tenant-c"]).is_empty());
    let a = activate(&harness, "work", &[A]);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].tenant_id, A);
    let both = activate(&harness, "work", &[A, B]);
    let tenants: Vec<_> = both.iter().map(|j| j.tenant_id.as_str()).collect();
    assert_eq!(
        tenants,
        vec![B, B],
        "A's job is taken; B's two, oldest first"
    );
}

#[test]
fn a_message_correlates_within_its_tenant_only() {
    let harness = Harness::new(2);
    let waiting = ProcessBuilder::new("order")
        .message("payment", Some("=orderId"))
        .start_event("s")
        .catch_event("paid", &message_ref("payment"))
        .end_event("e");
    deploy_process_in(&harness, A, &waiting);
    deploy_process_in(&harness, B, &waiting);
    let instance_a = create_in(&harness, A, "order", r#"{"orderId": "o-1"}"#);
    let instance_b = create_in(&harness, B, "order", r#"{"orderId": "o-1"}"#);
    harness.settle();

    let published = publish_in(&harness, A, "payment", "o-1", "pay-1");
    assert_eq!(published.record_type, RecordType::Event);
    harness.settle();
    assert!(
        completed(&harness, instance_a, "order"),
        "{}",
        harness.records().log()
    );
    assert!(
        !completed(&harness, instance_b, "order"),
        "B's instance waits on"
    );

    // Message ids are unique per tenant: B may use A's id, A may not use it twice.
    let again = publish_in(&harness, A, "payment", "o-1", "pay-1");
    assert_eq!(again.rejection_type, RejectionType::AlreadyExists);
    let in_b = publish_in(&harness, B, "payment", "o-1", "pay-1");
    assert_eq!(in_b.record_type, RecordType::Event);
    harness.settle();
    assert!(
        completed(&harness, instance_b, "order"),
        "{}",
        harness.records().log()
    );

    // A buffered message of another tenant is not taken by a new subscription.
    publish_in(&harness, A, "payment", "o-2", "");
    let late_b = create_in(&harness, B, "order", r#"{"orderId": "o-2"}"#);
    harness.settle();
    assert!(
        !completed(&harness, late_b, "order"),
        "{}",
        harness.records().log()
    );
}

#[test]
fn message_start_events_start_the_process_of_the_messages_tenant() {
    let harness = Harness::new(2);
    let started_by_message = ProcessBuilder::new("refund")
        .message("refund-requested", None)
        .start_event_with("s", &message_ref("refund-requested"))
        .end_event("e");
    deploy_process_in(&harness, A, &started_by_message);
    deploy_process_in(&harness, B, &started_by_message);
    publish_in(&harness, B, "refund-requested", "r-1", "");
    harness.settle();
    assert_eq!(started(&harness, "refund"), vec![B.to_string()]);
    publish_in(&harness, "tenant-c", "refund-requested", "r-2", "");
    harness.settle();
    assert_eq!(started(&harness, "refund"), vec![B.to_string()]);
}

#[test]
fn a_signal_reaches_the_subscriptions_of_its_tenant_only() {
    let harness = Harness::new(2);
    let waiting = ProcessBuilder::new("order")
        .signal("alarm")
        .start_event("s")
        .catch_event("alarmed", &signal_ref("alarm"))
        .end_event("e");
    let started_by_signal = ProcessBuilder::new("drill")
        .signal("alarm")
        .start_event_with("s", &signal_ref("alarm"))
        .end_event("e");
    for tenant in [A, B] {
        deploy_process_in(&harness, tenant, &waiting);
        deploy_process_in(&harness, tenant, &started_by_signal);
    }
    let instance_a = create_in(&harness, A, "order", "{}");
    let instance_b = create_in(&harness, B, "order", "{}");
    harness.settle();
    let broadcast = harness
        .execute(Record::command(
            -1,
            SignalIntent::Broadcast,
            SignalRecord {
                signal_name: "alarm".into(),
                variables: b"{}".to_vec(),
                tenant_id: A.into(),
            },
        ))
        .unwrap();
    assert_eq!(broadcast.record_type, RecordType::Event);
    harness.settle();
    assert!(
        completed(&harness, instance_a, "order"),
        "{}",
        harness.records().log()
    );
    assert!(!completed(&harness, instance_b, "order"));
    assert_eq!(started(&harness, "drill"), vec![A.to_string()]);
}

#[test]
fn decisions_called_processes_and_forms_are_looked_up_in_the_callers_tenant() {
    let harness = Harness::new(1);
    // The same decision id in two tenants, with different results.
    let in_b = DISCOUNTS.replace("<text>20</text>", "<text>25</text>");
    deploy_in(&harness, A, &[("discounts.dmn", DISCOUNTS)]);
    deploy_in(&harness, B, &[("discounts.dmn", &in_b)]);
    let evaluate = |tenant: &str| {
        harness
            .execute(Record::command(
                -1,
                DecisionEvaluationIntent::Evaluate,
                DecisionEvaluationRecord {
                    decision_id: "discount".into(),
                    variables: br#"{"tier": "gold"}"#.to_vec(),
                    tenant_id: tenant.into(),
                    ..Default::default()
                },
            ))
            .unwrap()
    };
    let outputs: Vec<String> = [A, B]
        .iter()
        .map(|t| {
            let evaluated = evaluate(t);
            let value = evaluated.value_as::<DecisionEvaluationRecord>().unwrap();
            assert_eq!(value.tenant_id, *t);
            value.decision_output.clone()
        })
        .collect();
    assert_eq!(outputs, vec!["20", "25"]);
    assert_eq!(evaluate("tenant-c").rejection_type, RejectionType::NotFound);

    // A business rule task evaluates its tenant's decision; a call activity calls its
    // tenant's process.
    let rule = ProcessBuilder::new("pricing")
        .start_event("s")
        .business_rule_task("d", "discount", "percent")
        .end_event("e");
    let calling = ProcessBuilder::new("main")
        .start_event("s")
        .call_activity("call", r#"processId="pricing""#, "")
        .end_event("e");
    for tenant in [A, B] {
        deploy_process_in(&harness, tenant, &rule);
        deploy_process_in(&harness, tenant, &calling);
    }
    let instance = create_in(&harness, B, "main", r#"{"tier": "gold"}"#);
    assert!(
        completed(&harness, instance, "main"),
        "{}",
        harness.records().log()
    );
    let called: Vec<String> = started(&harness, "pricing");
    assert_eq!(called, vec![B.to_string()]);
    let percent = harness
        .records()
        .values::<beeline_protocol::value::VariableRecord>()
        .into_iter()
        .filter(|v| v.name == "percent")
        .map(|v| (v.tenant_id, v.value))
        .collect::<Vec<_>>();
    assert_eq!(percent[0], (B.to_string(), "25".to_string()));

    // A user task's form is its tenant's.
    let form_b = deploy_in(&harness, B, &[("approval.form", crate::user_tasks::FORM)]);
    deploy_in(&harness, A, &[("approval.form", crate::user_tasks::FORM)]);
    let review = ProcessBuilder::new("review")
        .start_event("s")
        .user_task(
            "approve",
            true,
            r#"<zeebe:formDefinition formId="approval-form"/>"#,
        )
        .end_event("e");
    deploy_process_in(&harness, B, &review);
    create_in(&harness, B, "review", "{}");
    let task = harness
        .records()
        .values::<beeline_protocol::value::UserTaskRecord>()
        .remove(0);
    assert_eq!(task.tenant_id, B);
    assert_eq!(task.form_key, form_b.form_metadata[0].form_key);
}

#[test]
fn a_timer_start_event_of_one_tenant_stays_when_another_deploys_the_same_process() {
    let harness = Harness::new(1);
    let every_minute = ProcessBuilder::new("report")
        .start_event_with("s", &timer("timeCycle", "R/PT1M"))
        .end_event("e");
    deploy_process_in(&harness, A, &every_minute);
    deploy_process_in(&harness, B, &every_minute);
    harness.advance_time(61_000);
    harness.settle();
    let mut tenants = started(&harness, "report");
    tenants.sort();
    assert_eq!(tenants, vec![A.to_string(), B.to_string()]);
}

#[test]
fn commands_by_key_find_nothing_of_a_tenant_the_caller_may_not_act_for() {
    let harness = Harness::new(1);
    deploy_process_in(&harness, A, &one_task());
    let instance = create_in(&harness, A, "order", "{}");
    let job = activate(&harness, "work", &[A]).remove(0);
    let job_key = harness
        .records()
        .with_intent(beeline_protocol::intent::JobIntent::Created)
        .expect_one()
        .key;
    assert_eq!(job.tenant_id, A);
    let as_caller = |mut command: Record, tenants: &[&str]| {
        command.authorized_tenants = Some(tenants.iter().map(|t| t.to_string()).collect());
        harness.execute(command).unwrap()
    };
    let complete = || {
        Record::command(
            job_key,
            beeline_protocol::intent::JobIntent::Complete,
            JobRecord::default(),
        )
    };
    let refused = as_caller(complete(), &[B]);
    assert_eq!(refused.rejection_type, RejectionType::NotFound);
    assert_eq!(
        refused.rejection_reason,
        format!("Expected to complete job with key '{job_key}', but no such job was found")
    );
    let cancel = || {
        Record::command(
            instance,
            beeline_protocol::intent::ProcessInstanceIntent::Cancel,
            ProcessInstanceRecord::default(),
        )
    };
    assert_eq!(
        as_caller(cancel(), &[B]).rejection_type,
        RejectionType::NotFound
    );
    let variables = Record::command(
        -1,
        beeline_protocol::intent::VariableDocumentIntent::Update,
        beeline_protocol::value::VariableDocumentRecord {
            scope_key: instance,
            variables: br#"{"x": 1}"#.to_vec(),
            ..Default::default()
        },
    );
    assert_eq!(
        as_caller(variables.clone(), &[B]).rejection_type,
        RejectionType::NotFound
    );
    // The tenant's own caller, and commands without a caller's tenants, find them.
    assert_eq!(as_caller(variables, &[A, B]).record_type, RecordType::Event);
    assert_eq!(as_caller(complete(), &[A]).record_type, RecordType::Event);
    assert!(completed(&harness, instance, "order"));
}
