use beeline_protocol::intent::{CommandDistributionIntent, DeploymentIntent, ProcessIntent};
use beeline_protocol::value::{DeploymentRecord, ProcessRecord};
use beeline_protocol::{RecordType, RejectionType};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;

fn simple(id: &str) -> ProcessBuilder {
    ProcessBuilder::new(id)
        .start_event("start")
        .end_event("end")
}

#[test]
fn a_deployment_creates_version_one_and_identical_content_is_no_new_version() {
    let harness = Harness::new(1);
    let first = harness.deploy_process(&simple("order"));
    let deployment = first.value_as::<DeploymentRecord>().unwrap().clone();
    assert_eq!(deployment.processes_metadata.len(), 1);
    let metadata = &deployment.processes_metadata[0];
    assert_eq!(
        (
            metadata.bpmn_process_id.as_str(),
            metadata.version,
            metadata.is_duplicate
        ),
        ("order", 1, false)
    );
    assert_eq!(metadata.checksum.len(), 16, "an MD5 checksum, as Zeebe");
    let process = harness
        .records()
        .with_intent(ProcessIntent::Created)
        .expect_one();
    let record = process.value_as::<ProcessRecord>().unwrap();
    assert_eq!(
        record.process_definition_key,
        metadata.process_definition_key
    );
    assert!(!record.resource.is_empty(), "the resource is kept");

    let again = harness.deploy_process(&simple("order"));
    let again = &again
        .value_as::<DeploymentRecord>()
        .unwrap()
        .processes_metadata[0];
    assert!(again.is_duplicate);
    assert_eq!(
        (again.version, again.process_definition_key),
        (1, metadata.process_definition_key)
    );
    harness
        .records()
        .with_intent(ProcessIntent::Created)
        .expect_count(1);

    let changed = harness.deploy_process(
        &simple("order")
            .move_to("start")
            .task("extra")
            .end_event("end2"),
    );
    let changed = &changed
        .value_as::<DeploymentRecord>()
        .unwrap()
        .processes_metadata[0];
    assert_eq!(changed.version, 2);
    assert_ne!(
        changed.process_definition_key,
        metadata.process_definition_key
    );
    harness
        .records()
        .with_intent(ProcessIntent::Created)
        .expect_count(2);
}

#[test]
fn invalid_bpmn_is_rejected_with_every_problem_and_its_element() {
    let harness = Harness::new(1);
    let xml = r#"<?xml version="1.0"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="broken" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="task"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
  </bpmn:process>
</bpmn:definitions>"#;
    let rejection = harness.deploy("broken.bpmn", xml).unwrap();
    assert_eq!(rejection.record_type, RecordType::CommandRejection);
    assert_eq!(rejection.rejection_type, RejectionType::InvalidArgument);
    let reason = &rejection.rejection_reason;
    assert!(reason.starts_with("Expected to deploy new resources, but encountered the following errors:\n'broken.bpmn': "), "{reason}");
    assert!(reason.contains("- Element: task"), "{reason}");
    assert!(reason.contains("zeebe:taskDefinition"), "{reason}");
    harness
        .records()
        .with_intent(DeploymentIntent::Created)
        .expect_none();
}

#[test]
fn elements_beeline_does_not_run_yet_are_rejected_by_name() {
    let harness = Harness::new(1);
    let xml = r#"<?xml version="1.0"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:process id="waits" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:intermediateCatchEvent id="wait"><bpmn:conditionalEventDefinition><bpmn:condition xsi:type="bpmn:tFormalExpression" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">=ready</bpmn:condition></bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
  </bpmn:process>
</bpmn:definitions>"#;
    let rejection = harness.deploy("waits.bpmn", xml).unwrap();
    assert_eq!(rejection.rejection_type, RejectionType::InvalidArgument);
    assert!(
        rejection.rejection_reason.contains("- Element: wait"),
        "{}",
        rejection.rejection_reason
    );
    assert!(
        rejection
            .rejection_reason
            .contains("conditional intermediate catch event"),
        "{}",
        rejection.rejection_reason
    );
}

#[test]
fn a_broken_expression_rejects_the_deployment_naming_element_and_expression() {
    let harness = Harness::new(1);
    let process = ProcessBuilder::new("p")
        .start_event("start")
        .exclusive_gateway("split")
        .condition("=amount >")
        .end_event("a")
        .move_to("split")
        .default_flow()
        .end_event("b");
    let rejection = harness.deploy("p.bpmn", &process.build()).unwrap();
    assert_eq!(rejection.rejection_type, RejectionType::InvalidArgument);
    let reason = &rejection.rejection_reason;
    assert!(
        reason.contains("failed to parse expression '=amount >'"),
        "{reason}"
    );
    assert!(reason.contains("- Element: flow_split_a_"), "{reason}");
}

#[test]
fn resources_of_unknown_kinds_and_empty_deployments_are_rejected() {
    let harness = Harness::new(1);
    let rejection = harness.deploy("notes.txt", "hello").unwrap();
    assert_eq!(rejection.rejection_type, RejectionType::InvalidArgument);
    assert!(rejection.rejection_reason.contains("'notes.txt'"));
    let empty = harness
        .execute(beeline_protocol::Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord::default(),
        ))
        .unwrap();
    assert_eq!(
        empty.rejection_reason,
        "Expected to deploy at least one resource, but none given"
    );
}

#[test]
fn a_deployment_is_distributed_to_every_partition() {
    let harness = Harness::new(3);
    let deployed = harness.deploy_process(&simple("everywhere"));
    let metadata = deployed
        .value_as::<DeploymentRecord>()
        .unwrap()
        .processes_metadata[0]
        .clone();
    // Every partition gets the process with the same key, and acknowledges.
    for partition in 2..=3 {
        let mut found = false;
        for _ in 0..200 {
            let created = harness
                .records_of(partition)
                .with_intent(ProcessIntent::Created)
                .values::<ProcessRecord>();
            if let Some(process) = created.first() {
                assert_eq!(
                    process.process_definition_key,
                    metadata.process_definition_key
                );
                assert_eq!(process.version, 1);
                found = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            found,
            "partition {partition} got the process\n{}",
            harness.records_of(partition).log()
        );
    }
    let mut finished = false;
    for _ in 0..200 {
        if !harness
            .records_of(1)
            .with_intent(CommandDistributionIntent::Finished)
            .is_empty()
        {
            finished = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let records = harness.records_of(1);
    records.expect(finished, "the distribution finished");
    records
        .clone()
        .with_intent(CommandDistributionIntent::Distributing)
        .expect_count(2);
    records
        .clone()
        .with_intent(CommandDistributionIntent::Acknowledged)
        .expect_count(2);
    // Instances can start on any partition.
    let created = harness
        .execute_on(
            3,
            beeline_protocol::Record::command(
                -1,
                beeline_protocol::intent::ProcessInstanceCreationIntent::Create,
                beeline_protocol::value::ProcessInstanceCreationRecord {
                    bpmn_process_id: "everywhere".into(),
                    version: -1,
                    ..Default::default()
                },
            ),
        )
        .unwrap();
    assert_eq!(
        created.record_type,
        RecordType::Event,
        "{}",
        created.rejection_reason
    );
    assert_eq!(beeline_protocol::key::partition_of(created.key), Some(3));
}
