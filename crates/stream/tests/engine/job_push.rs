//! Job push: a job created while a job stream of its type is open is activated for that stream
//! in the creating batch and handed over once committed.

use std::time::Duration;

use beeline_log::Journal;
use beeline_protocol::intent::{
    DeploymentIntent, JobBatchIntent, JobIntent, ProcessInstanceCreationIntent,
    ProcessInstanceIntent as PI,
};
use beeline_protocol::value::{
    DeploymentRecord, DeploymentResource, JobBatchRecord, JobRecord, ProcessInstanceCreationRecord,
};
use beeline_protocol::{Intent, Record, RecordType, RejectionType};
use beeline_stream::testkit::bpmn::ProcessBuilder;
use beeline_stream::testkit::{Harness, PendingAnswer, START_TIME};
use beeline_stream::{
    FlushPolicy, JobStream, JobStreamProperties, JobStreams, PushedJob, Undelivered,
};

use crate::json;

fn properties(job_type: &str, fetch_variables: &[&str]) -> JobStreamProperties {
    JobStreamProperties {
        job_type: job_type.into(),
        worker: "streamer".into(),
        timeout: 30_000,
        fetch_variables: fetch_variables.iter().map(|v| v.to_string()).collect(),
        tenant_ids: vec!["<default>".into()],
    }
}

fn one_task() -> ProcessBuilder {
    ProcessBuilder::new("p")
        .start_event("s")
        .service_task("task", "work")
        .end_event("e")
}

fn deploy_one_task(harness: &Harness) {
    harness.deploy_process(&one_task());
}

fn receive(harness: &Harness, stream: &mut JobStream) -> PushedJob {
    harness
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), stream.recv()).await })
        .expect("a pushed job within 10 s")
        .expect("the stream is open")
}

#[test]
fn a_job_created_while_a_stream_is_open_is_activated_for_it_and_pushed() {
    let streams = JobStreams::new();
    let mut stream = streams.open(properties("work", &["order"]), 4);
    let harness = Harness::with_config(1, |config| config.job_streams = Some(streams.clone()));
    deploy_one_task(&harness);
    let instance = harness.create_instance("p", r#"{"order": {"id": 7}, "total": 12.5}"#);

    let records = harness.records();
    let created = records.clone().with_intent(JobIntent::Created).expect_one();
    let activated = records
        .clone()
        .with_intent(JobBatchIntent::Activated)
        .expect_one();
    // Zeebe's order: the job is created, then activated for the stream, in one batch.
    assert_eq!(activated.position, created.position + 1);
    let batch = activated.value_as::<JobBatchRecord>().unwrap();
    assert_eq!(batch.job_keys, [created.key]);
    assert_eq!(batch.worker, "streamer");
    assert_eq!(batch.timeout, 30_000);
    assert_eq!(batch.max_jobs_to_activate, 1);
    let job = &batch.jobs[0];
    assert_eq!(job.deadline, START_TIME + 30_000);
    assert_eq!(
        json(&job.variables),
        serde_json::json!({"order": {"id": 7}}),
        "only the variables the stream fetches"
    );

    let pushed = receive(&harness, &mut stream);
    assert_eq!(pushed.key, created.key);
    assert_eq!(&pushed.job, job);
    assert_eq!(pushed.job.process_instance_key, instance);
    assert!(
        harness.activate_jobs("work", 5).is_empty(),
        "a pushed job is activated: nobody else gets it"
    );

    harness.complete_job(pushed.key, "{}").unwrap();
    harness
        .records()
        .of_instance(instance)
        .with_element("p")
        .with_intent(PI::ElementCompleted)
        .expect_one();
    assert_eq!(
        beeline_stream::PartitionMetrics::get(&harness.partition(1).metrics().jobs_pushed),
        1
    );
}

#[test]
fn jobs_wait_to_be_activated_when_no_stream_of_their_type_and_tenant_has_room() {
    let streams = JobStreams::new();
    let other_type = streams.open(properties("other", &[]), 4);
    let mut other_tenant = properties("work", &[]);
    other_tenant.tenant_ids = vec!["tenant-b".into()];
    let other_tenant = streams.open(other_tenant, 4);
    let full = streams.open(properties("work", &[]), 1);
    let harness = Harness::with_config(1, |config| config.job_streams = Some(streams.clone()));
    deploy_one_task(&harness);
    harness.create_instance("p", "{}");
    harness.create_instance("p", "{}");

    // The first job fills the stream with room for one; the second waits.
    let records = harness.records();
    records
        .clone()
        .with_intent(JobIntent::Created)
        .expect_count(2);
    // One job pushed.
    records.with_intent(JobBatchIntent::Activated).expect_one();
    let waiting = harness.activate_jobs("work", 5);
    assert_eq!(waiting.len(), 1, "the other job is activatable");
    drop((other_type, other_tenant, full));
}

/// Submits `command` to partition 1 and waits until it is processed: the command's log entry
/// and its results' entry are written (committed only when the caller syncs).
fn process(harness: &Harness, command: Record) -> PendingAnswer {
    let written = harness.journal(1).last_index();
    let answer = harness.submit(1, command);
    for _ in 0..10_000 {
        if harness.journal(1).last_index() >= written + 2 {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("partition 1 did not process a command within 10 s");
}

#[test]
fn a_job_whose_stream_closed_before_the_commit_is_yielded() {
    let streams = JobStreams::new();
    let stream = streams.open(properties("work", &[]), 4);
    // Nothing is committed until asked: the stream closes between processing and commit.
    let harness = Harness::with_config(1, |config| {
        config.job_streams = Some(streams.clone());
        config.flush = FlushPolicy::Delayed(Duration::from_secs(3600));
    });
    let deploying = process(
        &harness,
        Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord {
                resources: vec![DeploymentResource {
                    resource: one_task().build().into_bytes(),
                    resource_name: "one-task.bpmn".into(),
                }],
                ..Default::default()
            },
        ),
    );
    harness.sync(1);
    deploying.wait(&harness).expect("deployed");
    // Processed (written), not committed.
    let answer = process(
        &harness,
        Record::command(
            -1,
            ProcessInstanceCreationIntent::Create,
            ProcessInstanceCreationRecord {
                bpmn_process_id: "p".into(),
                version: -1,
                variables: b"{}".to_vec(),
                ..Default::default()
            },
        ),
    );
    assert!(
        stream.close().is_empty(),
        "nothing pushed before the commit"
    );
    harness.sync(1);
    answer.wait(&harness).expect("created");

    let records = harness.records();
    let created = records.clone().with_intent(JobIntent::Created).expect_one();
    let yielded = records.with_intent(JobIntent::Yielded).expect_one();
    assert_eq!(yielded.key, created.key);
    let activating = process(
        &harness,
        Record::command(
            -1,
            JobBatchIntent::Activate,
            JobBatchRecord {
                r#type: "work".into(),
                worker: "poller".into(),
                timeout: 1_000,
                max_jobs_to_activate: 5,
                tenant_ids: vec!["<default>".into()],
                ..Default::default()
            },
        ),
    );
    harness.sync(1);
    let activated = activating.wait(&harness).expect("activated");
    let batch = activated.value_as::<JobBatchRecord>().unwrap();
    assert_eq!(batch.job_keys, [created.key], "activatable again");
    assert_eq!(batch.jobs[0].retries, 3, "a yield costs no retry");
    assert_eq!(
        beeline_stream::PartitionMetrics::get(&harness.partition(1).metrics().jobs_pushed),
        0
    );
}

#[test]
fn replay_restores_a_pushed_job_as_activated() {
    let streams = JobStreams::new();
    let mut stream = streams.open(properties("work", &[]), 4);
    let mut harness = Harness::with_config(1, |config| config.job_streams = Some(streams.clone()));
    deploy_one_task(&harness);
    harness.create_instance("p", "{}");
    let pushed = receive(&harness, &mut stream);
    drop(stream);
    harness.restart(1);
    assert!(
        harness.activate_jobs("work", 5).is_empty(),
        "still activated for the stream after the replay"
    );
    let completed = harness.complete_job(pushed.key, "{}").unwrap();
    assert_eq!(completed.intent, Intent::from(JobIntent::Completed));
}

#[test]
fn a_yield_hands_back_only_the_activation_it_names() {
    let streams = JobStreams::new();
    let mut stream = streams.open(properties("work", &[]), 4);
    let harness = Harness::with_config(1, |config| config.job_streams = Some(streams.clone()));
    deploy_one_task(&harness);
    harness.create_instance("p", "{}");
    let pushed = receive(&harness, &mut stream);
    drop(stream);
    let deadline = pushed.job.deadline;
    assert!(deadline > 0);

    // A yield for an earlier activation (sent late, or twice) leaves the job to its holder.
    let stale = harness
        .execute(Record::command(
            pushed.key,
            JobIntent::Yield,
            JobRecord {
                deadline: deadline - 1,
                ..Default::default()
            },
        ))
        .expect("answered");
    assert_eq!(stale.record_type, RecordType::CommandRejection);
    assert_eq!(stale.rejection_type, RejectionType::InvalidState);
    assert!(
        harness.activate_jobs("work", 5).is_empty(),
        "still activated for the stream"
    );

    // Handed back through the partition's handle, as a stream's reader does: yielded.
    let handle = harness.partition(1).clone();
    let undelivered = Undelivered {
        key: pushed.key,
        deadline,
        after: 0,
    };
    harness.block_on(handle.hand_back(vec![undelivered, undelivered]));
    let mut yielded = Vec::new();
    for _ in 0..200 {
        yielded = harness
            .records()
            .with_intent(JobIntent::Yielded)
            .list()
            .to_vec();
        if !yielded.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(yielded.len(), 1, "yielded once: {yielded:?}");
    let again = harness.activate_jobs("work", 5);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].0, pushed.key);
    assert_eq!(again[0].1.retries, 3, "a yield costs no retry");
    // The same hand-back arriving once more does not take the job from its new holder.
    let late = harness
        .execute(Record::command(
            pushed.key,
            JobIntent::Yield,
            JobRecord {
                deadline,
                ..Default::default()
            },
        ))
        .expect("answered");
    assert_eq!(late.record_type, RecordType::CommandRejection);
}
