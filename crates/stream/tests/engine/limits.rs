//! Limits: what does not fit a message or a log entry gets a clear answer, and neither loops
//! nor stops the partition.

use beeline_protocol::intent::{
    ErrorIntent, IncidentIntent, JobIntent, MessageIntent, ProcessIntent,
};
use beeline_protocol::value::{IncidentRecord, JobRecord, MessageRecord};
use beeline_protocol::{RecordType, RejectionType};
use beeline_stream::PartitionError;
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::{ProcessBuilder, timer};

fn text(size: usize) -> String {
    format!(r#"{{"big":"{}"}}"#, "x".repeat(size))
}

#[test]
fn a_job_too_large_for_a_message_gets_an_incident_and_the_jobs_behind_it_are_activated() {
    // A job of 20 KB: it fits a log entry (64 KiB) but not a message to a worker (16 KiB).
    let harness = Harness::with_config(1, |config| {
        config.max_batch_bytes = 64 << 10;
        config.max_message_size = 16 << 10;
    });
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("task", "work")
            .end_event("e"),
    );
    let large = harness.create_instance("p", &text(20_000));
    let small = harness.create_instance("p", r#"{"big":"no"}"#);

    let activated = harness.activate_jobs("work", 10);
    assert_eq!(activated.len(), 1, "{}", harness.records().log());
    assert_eq!(activated[0].1.process_instance_key, small);
    let incident = harness
        .records()
        .with_intent(IncidentIntent::Created)
        .expect_one();
    assert_eq!(incident.record_version, 2, "written for the newest applier");
    let value = incident.value_as::<IncidentRecord>().unwrap();
    assert_eq!(value.error_type, "MESSAGE_SIZE_EXCEEDED");
    assert_eq!(value.process_instance_key, large);
    assert!(
        value.error_message.starts_with(&format!(
            "The job with key '{}' can not be activated",
            value.job_key
        )),
        "{}",
        value.error_message
    );
    assert!(
        harness.activate_jobs("work", 10).is_empty(),
        "the large job is not offered again: no loop"
    );
    assert_eq!(
        harness.records().with_intent(IncidentIntent::Created).len(),
        1,
        "one incident, not one per activation"
    );

    // Made smaller and resolved, it is activated.
    harness
        .set_variables(large, r#"{"big":"small now"}"#, false)
        .unwrap();
    harness.resolve_incident(incident.key).unwrap();
    let (key, job) = harness.activate_job("work");
    assert_eq!((key, job.process_instance_key), (value.job_key, large));
}

#[test]
fn a_rejection_that_would_not_fit_the_log_goes_without_the_command_value() {
    let max = 4096;
    let harness = Harness::with_config(1, |config| config.max_batch_bytes = max);
    // The largest message command that fits: its rejection, with a reason, would not.
    let mut size = 3_000;
    let rejection = loop {
        match harness.publish_message("big", "k", 0, "", &text(size)) {
            Err(PartitionError::CommandTooLarge { .. }) => size -= 1,
            Ok(answer) if answer.record_type == RecordType::CommandRejection && size < 3_100 => {
                size += 1;
            }
            Ok(answer) => {
                // Nothing bigger fits: the step before was the last that did.
                if let Err(PartitionError::CommandTooLarge { .. }) =
                    harness.publish_message("big", "k", 0, "", &text(size + 1))
                {
                    break answer;
                }
                size += 1;
            }
            Err(other) => panic!("{other:?}"),
        }
        assert!(size > 2_000, "no command size found that fits");
    };
    assert_eq!(
        rejection.rejection_type,
        RejectionType::ExceededBatchRecordSize
    );
    let logged = harness
        .records()
        .rejections()
        .with_rejection(RejectionType::ExceededBatchRecordSize)
        .list()
        .last()
        .cloned()
        .unwrap();
    assert!(
        logged
            .value_as::<MessageRecord>()
            .unwrap()
            .variables
            .is_empty(),
        "the rejection of the largest command carries no value"
    );
    let ok = harness
        .publish_message("small", "k", 1000, "", "{}")
        .unwrap();
    assert_eq!(ok.intent, MessageIntent::Published.into());
}

#[test]
fn an_internal_step_too_large_for_the_log_bans_its_instance_and_the_partition_goes_on() {
    let harness = Harness::with_config(1, |config| config.max_batch_bytes = 64 << 10);
    // After the timer, the sub-process copies a 25 KB variable three times: 75 KB of
    // variables, which do not fit one 64 KiB entry.
    harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .catch_event("wait", &timer("timeDuration", "PT1M"))
            .sub_process("sub")
            .start_event("sub-start")
            .service_task("task", "work")
            .end_sub_process()
            .io_mapping(
                "sub",
                r#"<zeebe:input source="=big" target="a"/><zeebe:input source="=big" target="b"/><zeebe:input source="=big" target="c"/>"#,
            )
            .end_event("e"),
    );
    let instance = harness.create_instance("p", &text(25_000));
    harness.advance_time(60_000);
    harness.settle();
    let error = harness
        .records()
        .with_intent(ErrorIntent::Created)
        .expect_one();
    assert_eq!(error.key, instance);
    harness
        .records()
        .rejections()
        .with_rejection(RejectionType::ExceededBatchRecordSize)
        .expect_one();
    harness
        .records()
        .with_intent(JobIntent::Created)
        .expect_none();
    // The partition goes on.
    let other = harness.create_instance("p", r#"{"big":"no"}"#);
    assert!(other > instance);
}

#[test]
fn a_deployment_refused_for_its_size_leaves_nothing_cached_for_the_next_one_with_its_key() {
    let harness = Harness::with_config(1, |config| config.max_batch_bytes = 64 << 10);
    // 40 KB of comment: the command fits one entry, its results (the resource in DEPLOYMENT
    // CREATED and in PROCESS CREATED) do not. Its batch read the new definition, as every
    // deployment does, before the stream processor refused the results.
    let large = ProcessBuilder::new("p")
        .start_event("s")
        .service_task("task", "from-the-refused-deployment")
        .end_event("e")
        .build()
        .replacen("?>", &format!("?><!--{}-->", "x".repeat(40_000)), 1);
    let refused = harness.deploy("large.bpmn", &large).unwrap();
    assert_eq!(
        (refused.record_type, refused.rejection_type),
        (
            RecordType::CommandRejection,
            RejectionType::ExceededBatchRecordSize
        )
    );
    // The next deployment is given the same keys, the refused one's being rolled back.
    let deployed = harness.deploy_process(
        &ProcessBuilder::new("p")
            .start_event("s")
            .service_task("task", "from-the-written-deployment")
            .end_event("e"),
    );
    let process = harness
        .records()
        .with_intent(ProcessIntent::Created)
        .expect_one();
    assert!(deployed.key < process.key, "{}", harness.records().log());

    let instance = harness.create_instance("p", "{}");
    let job = harness
        .records()
        .with_intent(JobIntent::Created)
        .expect_one();
    let job = job.value_as::<JobRecord>().unwrap();
    assert_eq!(
        (job.process_instance_key, job.r#type.as_str()),
        (instance, "from-the-written-deployment"),
        "the instance runs the definition that was written"
    );
}
