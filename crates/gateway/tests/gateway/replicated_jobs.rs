//! Job workers of a replicated cluster through leader changes: a worker connected to a broker
//! that leads nothing gets jobs of every partition, pushed (`StreamActivatedJobs`) and long
//! polled (`ActivateJobs`); a pushed job that cannot be delivered is activatable again; and no
//! job is held by two workers at once across a failover.
//!
//! Five brokers hold three replicas of each of three partitions (partition p on brokers p - 1,
//! p and p + 1), so at least two brokers lead nothing, and some hold no replica of a partition.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use beeline_gateway::proto::gateway_client::GatewayClient;
use beeline_gateway::proto::*;
use beeline_gateway::routing::message_partition;
use beeline_protocol::intent::{JobBatchIntent, JobIntent, ProcessInstanceCreationIntent};
use beeline_protocol::key;
use beeline_protocol::value::{JobBatchRecord, ProcessInstanceCreationRecord};
use beeline_protocol::{Intent, Record};
use beeline_stream::testkit::bpmn::ProcessBuilder;
use tonic::transport::Channel;

use super::replicated::{Shape, TestCluster, completed, gateway_config};
use super::{create, resource};

const FIVE: Shape = Shape {
    brokers: 5,
    partitions: 3,
    factor: 3,
};

/// Three brokers with a replica of each of three partitions.
const THREE: Shape = Shape {
    brokers: 3,
    partitions: 3,
    factor: 3,
};

/// A process whose one service task has jobs of `job_type`.
fn work(process: &str, job_type: &str) -> String {
    ProcessBuilder::new(process)
        .start_event("start")
        .service_task("task", job_type)
        .end_event("end")
        .build()
}

async fn deploy(client: &mut GatewayClient<Channel>, name: &str, xml: &str) {
    client
        .deploy_resource(DeployResourceRequest {
            resources: vec![resource(&format!("{name}.bpmn"), xml)],
            tenant_id: String::new(),
        })
        .await
        .expect("deployed");
}

/// Creates one instance of `process`; retried while the deployment is on its way to the
/// partition or the partition's leader moves (a retried creation may leave an instance behind,
/// which is only one more job).
async fn create_one(client: &mut GatewayClient<Channel>, process: &str) -> i64 {
    for _ in 0..600 {
        match client.create_process_instance(create(process, "{}")).await {
            Ok(created) => return created.into_inner().process_instance_key,
            Err(status)
                if matches!(
                    status.code(),
                    tonic::Code::NotFound
                        | tonic::Code::Unavailable
                        | tonic::Code::DeadlineExceeded
                        | tonic::Code::ResourceExhausted
                ) =>
            {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            Err(status) => panic!("creation failed: {status:?}"),
        }
    }
    panic!("no instance of {process} created");
}

/// Creates instances of `process` until one lands on `partition`; every key created.
async fn create_on(
    client: &mut GatewayClient<Channel>,
    process: &str,
    partition: u16,
) -> (i64, Vec<i64>) {
    let mut created = Vec::new();
    for _ in 0..60 {
        let key = create_one(client, process).await;
        created.push(key);
        if key::partition_of(key) == Some(partition) {
            return (key, created);
        }
    }
    panic!("no instance of {process} landed on partition {partition}");
}

fn partitions_of(jobs: &[ActivatedJob]) -> Vec<u16> {
    let mut partitions: Vec<u16> = jobs
        .iter()
        .filter_map(|job| key::partition_of(job.key))
        .collect();
    partitions.sort_unstable();
    partitions.dedup();
    partitions
}

/// Brokers that lead no partition now.
fn bystanders(cluster: &TestCluster) -> Vec<usize> {
    cluster
        .running()
        .into_iter()
        .filter(|node| (1..=FIVE.partitions).all(|p| cluster.leader_of(p) != Some(*node)))
        .collect()
}

/// A broker that leads nothing and a partition it holds no replica of (so that the
/// partition's leader, wherever it moves, is always another broker).
fn worker_and_partition(cluster: &TestCluster) -> (usize, u16) {
    for node in bystanders(cluster) {
        if let Some(partition) =
            (1..=FIVE.partitions).find(|p| cluster.broker(node).local.partition(*p).is_none())
        {
            return (node, partition);
        }
    }
    panic!("no broker leads nothing and misses a partition");
}

/// Waits until every running broker has a job stream registered (the gateway's own, or one
/// another gateway registered through `OpenJobStream`).
async fn await_registered(cluster: &TestCluster) {
    for _ in 0..400 {
        if cluster
            .running()
            .iter()
            .all(|node| !cluster.broker(*node).job_streams.is_empty())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let missing: Vec<usize> = cluster
        .running()
        .into_iter()
        .filter(|node| cluster.broker(*node).job_streams.is_empty())
        .collect();
    panic!("the job stream is not registered on brokers {missing:?}");
}

async fn open_stream(
    client: &mut GatewayClient<Channel>,
    job_type: &str,
    worker: &str,
    timeout: i64,
) -> tonic::Streaming<ActivatedJob> {
    client
        .stream_activated_jobs(StreamActivatedJobsRequest {
            r#type: job_type.into(),
            worker: worker.into(),
            timeout,
            ..StreamActivatedJobsRequest::default()
        })
        .await
        .expect("stream opens")
        .into_inner()
}

/// Reads the stream until the job of `instance` comes.
async fn await_job(stream: &mut tonic::Streaming<ActivatedJob>, instance: i64) -> ActivatedJob {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let job = tokio::time::timeout(left, stream.message())
            .await
            .unwrap_or_else(|_| panic!("the job of instance {instance} is not pushed in time"))
            .expect("the stream stays open")
            .expect("the stream goes on");
        if job.process_instance_key == instance {
            return job;
        }
    }
}

/// One `ActivateJobs` call: what it delivered.
async fn activate(
    client: &mut GatewayClient<Channel>,
    job_type: &str,
    worker: &str,
    timeout: i64,
    max: i32,
    request_timeout: i64,
) -> Result<Vec<ActivatedJob>, tonic::Status> {
    let mut responses = client
        .activate_jobs(ActivateJobsRequest {
            r#type: job_type.into(),
            worker: worker.into(),
            timeout,
            max_jobs_to_activate: max,
            request_timeout,
            ..ActivateJobsRequest::default()
        })
        .await?
        .into_inner();
    let mut jobs = Vec::new();
    while let Some(response) = responses.message().await? {
        jobs.extend(response.jobs);
    }
    Ok(jobs)
}

/// Activates `job_type` jobs through `client` until the jobs of every instance in
/// `instances` were in hand; panics naming those never activated.
async fn activate_all(
    client: &mut GatewayClient<Channel>,
    job_type: &str,
    instances: &HashSet<i64>,
    within: Duration,
) -> Vec<ActivatedJob> {
    let deadline = Instant::now() + within;
    let mut jobs: Vec<ActivatedJob> = Vec::new();
    loop {
        let seen: HashSet<i64> = jobs.iter().map(|j| j.process_instance_key).collect();
        if instances.is_subset(&seen) {
            return jobs;
        }
        if Instant::now() >= deadline {
            let lost: Vec<&i64> = instances.difference(&seen).collect();
            panic!("the jobs of instances {lost:?} were never activatable again");
        }
        match activate(client, job_type, "poller", 60_000, 32, 1_000).await {
            Ok(activated) => jobs.extend(activated),
            Err(status) => {
                eprintln!("activation failed: {status:?}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn complete(client: &mut GatewayClient<Channel>, job: i64) {
    for _ in 0..200 {
        match client
            .complete_job(CompleteJobRequest {
                job_key: job,
                variables: String::new(),
                result: None,
            })
            .await
        {
            // NOT_FOUND: completed already (a retry after an answer that did not come).
            Ok(_) => return,
            Err(status) if status.code() == tonic::Code::NotFound => return,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    panic!("job {job} cannot be completed");
}

/// How many jobs the replica of `partition` on `node` pushed to streams.
fn pushed(cluster: &TestCluster, node: usize, partition: u16) -> u64 {
    cluster
        .broker(node)
        .local
        .partition(partition)
        .map_or(0, |h| {
            h.metrics()
                .jobs_pushed
                .load(std::sync::atomic::Ordering::Relaxed)
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_a_broker_leading_nothing_gets_pushed_jobs_of_every_partition_through_failovers_and_restarts()
 {
    let mut cluster = TestCluster::start(FIVE, gateway_config()).await;
    let (worker, moving) = worker_and_partition(&cluster);
    eprintln!("worker on broker {worker}; partition {moving} fails over");
    let mut client = cluster.client(worker).await;
    deploy(&mut client, "streamed", &work("streamed", "streamed")).await;
    let mut stream = open_stream(&mut client, "streamed", "streamer", 60_000).await;
    await_registered(&cluster).await;

    // Pushed from every partition, each led by another broker.
    for partition in 1..=FIVE.partitions {
        let leader = cluster.leader_of(partition).expect("a leader");
        let before = pushed(&cluster, leader, partition);
        let (instance, _) = create_on(&mut client, "streamed", partition).await;
        await_job(&mut stream, instance).await;
        assert!(
            pushed(&cluster, leader, partition) > before,
            "partition {partition}'s job was pushed by its leader"
        );
    }

    // The moving partition's leader stops; its new leader pushes to the stream; the stopped
    // broker restarts, and the stream registers there too. Until the partition is led by a
    // broker that started after the stream opened, and pushes from there. The first broker
    // to stop leaves the stream's call to it hanging, as a broker cut off by the network
    // would: the stream must not wait on it.
    let mut restarted = HashSet::new();
    for round in 0..8 {
        let leader = cluster.leader_of(moving).expect("a leader");
        if restarted.contains(&leader) {
            break;
        }
        eprintln!("stopping broker {leader}, the leader of partition {moving}");
        if round == 0 {
            cluster.stop_hanging(leader).await;
        } else {
            cluster.stop(leader).await;
        }
        cluster.await_leaders().await;
        let (instance, _) = create_on(&mut client, "streamed", moving).await;
        await_job(&mut stream, instance).await;
        cluster.restart(leader).await;
        restarted.insert(leader);
        await_registered(&cluster).await;
    }
    let leader = cluster.leader_of(moving).expect("a leader");
    assert!(
        restarted.contains(&leader),
        "partition {moving} is led by a restarted broker"
    );
    for partition in 1..=FIVE.partitions {
        let leader = cluster.leader_of(partition).expect("a leader");
        let before = pushed(&cluster, leader, partition);
        let (instance, _) = create_on(&mut client, "streamed", partition).await;
        await_job(&mut stream, instance).await;
        assert!(
            pushed(&cluster, leader, partition) > before,
            "partition {partition}'s job was pushed by its leader, broker {leader}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_on_a_broker_leading_nothing_gets_jobs_of_every_partition_and_wakes_for_a_moved_partition()
 {
    // The probe interval (30 s) is longer than any wait below: only a notice wakes a poll.
    let mut cluster = TestCluster::start(FIVE, gateway_config()).await;
    let (worker, moving) = worker_and_partition(&cluster);
    eprintln!("worker on broker {worker}; partition {moving} fails over");
    let mut client = cluster.client(worker).await;
    deploy(&mut client, "polled", &work("polled", "polled")).await;
    let waiting = ProcessBuilder::new("waiting")
        .message("go", Some("=id"))
        .start_event("start")
        .receive_task("wait", "go")
        .service_task("task", "woken")
        .end_event("end")
        .build();
    deploy(&mut client, "waiting", &waiting).await;

    // A job on every partition; one long poll takes them all.
    for partition in 1..=FIVE.partitions {
        create_on(&mut client, "polled", partition).await;
    }
    let jobs = activate(&mut client, "polled", "poller", 60_000, 32, 10_000)
        .await
        .expect("activated");
    assert_eq!(
        partitions_of(&jobs),
        vec![1, 2, 3],
        "jobs of every partition"
    );

    // An instance waits on the moving partition for its message; the partition's leader
    // moves; a long poll waits; the message makes the new leader create the job, whose notice
    // wakes the poll at once.
    let mut instance = None;
    for attempt in 0..60 {
        // Each instance waits for a message of its own.
        let correlation = format!("wake-{attempt}");
        let request = create("waiting", &format!(r#"{{"id": "{correlation}"}}"#));
        let key = match client.create_process_instance(request).await {
            Ok(created) => created.into_inner().process_instance_key,
            Err(status) if status.code() == tonic::Code::NotFound => {
                tokio::time::sleep(Duration::from_millis(25)).await;
                continue;
            }
            Err(status) => panic!("creation failed: {status:?}"),
        };
        if key::partition_of(key) == Some(moving) {
            instance = Some((key, correlation));
            break;
        }
    }
    let (instance, correlation) = instance.expect("an instance on the moving partition");
    eprintln!(
        "its message goes to partition {}",
        message_partition(&correlation, FIVE.partitions)
    );
    let leader = cluster.leader_of(moving).expect("a leader");
    eprintln!("stopping broker {leader}, the leader of partition {moving}");
    cluster.stop(leader).await;
    cluster.await_leaders().await;
    let mut polling = client.clone();
    let poll = tokio::spawn(async move {
        let started = Instant::now();
        let jobs = activate(&mut polling, "woken", "poller", 60_000, 1, 25_000).await;
        (jobs, started.elapsed())
    });
    // The poll has looked once and waits.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!poll.is_finished(), "the poll waits for jobs");
    let published = Instant::now();
    for _ in 0..200 {
        match client
            .publish_message(PublishMessageRequest {
                name: "go".into(),
                correlation_key: correlation.clone(),
                time_to_live: 60_000,
                message_id: String::new(),
                variables: "{}".into(),
                tenant_id: String::new(),
            })
            .await
        {
            Ok(_) => break,
            Err(status) => {
                eprintln!("publishing failed: {status:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    let (jobs, waited) = poll.await.expect("poll");
    let jobs = jobs.expect("activated");
    assert_eq!(jobs.len(), 1, "the poll gets the job: {jobs:?}");
    assert_eq!(jobs[0].process_instance_key, instance);
    assert_eq!(key::partition_of(jobs[0].key), Some(moving));
    eprintln!(
        "the poll waited {} ms, {} ms after the message",
        waited.as_millis(),
        published.elapsed().as_millis()
    );
    assert!(
        published.elapsed() < Duration::from_secs(10),
        "woken by the job's notice, not by the probe interval or the request timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_jobs_that_cannot_be_delivered_are_activatable_again() {
    let mut cluster = TestCluster::start(FIVE, gateway_config()).await;
    let idle = bystanders(&cluster);
    let worker = idle[0];
    let poller = cluster
        .running()
        .into_iter()
        .find(|node| *node != worker)
        .expect("another broker");
    eprintln!("worker on broker {worker}, poller on broker {poller}");
    let mut client = cluster.client(poller).await;
    deploy(&mut client, "handed", &work("handed", "handed")).await;
    // Jobs the worker held time out after 3 s: what it got and never completed comes back.
    const HELD: i64 = 3_000;

    // The worker's stream goes away with jobs pushed and not read.
    let mut stream = open_stream(
        &mut cluster.client(worker).await,
        "handed",
        "streamer",
        HELD,
    )
    .await;
    await_registered(&cluster).await;
    let mut instances = HashSet::new();
    for _ in 0..9 {
        instances.insert(create_one(&mut client, "handed").await);
    }
    let first = tokio::time::timeout(Duration::from_secs(20), stream.message())
        .await
        .expect("a job is pushed")
        .expect("stream")
        .expect("open");
    assert!(instances.contains(&first.process_instance_key));
    drop(stream);
    let jobs = activate_all(&mut client, "handed", &instances, Duration::from_secs(30)).await;
    for job in &jobs {
        complete(&mut client, job.key).await;
    }

    // The worker's broker dies while jobs are pushed to its stream.
    let mut stream = open_stream(
        &mut cluster.client(worker).await,
        "handed",
        "streamer",
        HELD,
    )
    .await;
    await_registered(&cluster).await;
    let received = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let received = received.clone();
        tokio::spawn(async move {
            while let Ok(Some(job)) = stream.message().await {
                received.lock().unwrap().push(job.key);
            }
        })
    };
    let mut instances = HashSet::new();
    for i in 0..12 {
        if i == 6 {
            eprintln!("stopping broker {worker}, the worker's");
            cluster.stop(worker).await;
        }
        instances.insert(create_one(&mut client, "handed").await);
    }
    cluster.await_leaders().await;
    let jobs = activate_all(&mut client, "handed", &instances, Duration::from_secs(30)).await;
    reader.abort();
    eprintln!(
        "the worker got {} jobs before its broker stopped; all {} activatable again",
        received.lock().unwrap().len(),
        instances.len()
    );
    for job in &jobs {
        complete(&mut client, job.key).await;
    }
}

/// A job in a worker's hands: which worker, when its hold ends.
#[derive(Debug, Clone)]
struct Held {
    worker: &'static str,
    key: i64,
    instance: i64,
    deadline: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_leader_failover_no_job_is_lost_or_held_by_two_workers() {
    let mut cluster = TestCluster::start(FIVE, gateway_config()).await;
    let idle = bystanders(&cluster);
    let (streamer, poller) = (idle[0], idle[1]);
    eprintln!("streaming worker on broker {streamer}, polling worker on broker {poller}");
    let mut client = cluster.client(poller).await;
    deploy(&mut client, "busy", &work("busy", "busy")).await;
    const HELD: i64 = 3_000;
    let held: Arc<Mutex<Vec<Held>>> = Arc::default();

    // Two workers complete what they get: one streams through `streamer`, one polls through
    // `poller`; both record every job they are handed.
    let mut stream_client = cluster.client(streamer).await;
    let mut stream = open_stream(&mut stream_client, "busy", "streamer", HELD).await;
    await_registered(&cluster).await;
    let streaming = {
        let held = held.clone();
        tokio::spawn(async move {
            while let Ok(Some(job)) = stream.message().await {
                held.lock().unwrap().push(Held {
                    worker: "streamer",
                    key: job.key,
                    instance: job.process_instance_key,
                    deadline: job.deadline,
                });
                complete(&mut stream_client, job.key).await;
            }
        })
    };
    let polling = {
        let held = held.clone();
        let mut client = cluster.client(poller).await;
        tokio::spawn(async move {
            loop {
                match activate(&mut client, "busy", "poller", HELD, 4, 500).await {
                    Ok(jobs) => {
                        for job in jobs {
                            held.lock().unwrap().push(Held {
                                worker: "poller",
                                key: job.key,
                                instance: job.process_instance_key,
                                deadline: job.deadline,
                            });
                            complete(&mut client, job.key).await;
                        }
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        })
    };

    // Instances are created through the polling worker's broker while the leader of a
    // partition stops.
    let mut instances = Vec::new();
    let mut stopped = None;
    for i in 0..40 {
        if i == 15 {
            let partition = (1..=FIVE.partitions)
                .max_by_key(|p| {
                    instances
                        .iter()
                        .filter(|k| key::partition_of(**k) == Some(*p))
                        .count()
                })
                .expect("a partition");
            let leader = cluster.leader_of(partition).expect("a leader");
            eprintln!("stopping broker {leader}, the leader of partition {partition}");
            cluster.stop(leader).await;
            stopped = Some(leader);
        }
        instances.push(create_one(&mut client, "busy").await);
    }
    assert!(stopped.is_some());
    cluster.await_leaders().await;
    // Every instance completes: each job was delivered and completed, or came back (yielded
    // or timed out) and was delivered again.
    for partition in 1..=FIVE.partitions {
        let mine: Vec<i64> = instances
            .iter()
            .copied()
            .filter(|k| key::partition_of(*k) == Some(partition))
            .collect();
        for _ in 0..600 {
            let records = cluster.records(partition).await;
            if mine.iter().all(|k| completed(&records, *k)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let records = cluster.records(partition).await;
        let open: Vec<&i64> = mine.iter().filter(|k| !completed(&records, **k)).collect();
        assert!(
            open.is_empty(),
            "partition {partition}: instances {open:?} never completed"
        );
    }
    streaming.abort();
    polling.abort();

    // Each job a worker was handed is an activation in its partition's committed log, and a
    // job is handed again only once the hold before has ended.
    let held = held.lock().unwrap().clone();
    let mut committed: HashMap<u16, HashSet<(i64, i64)>> = HashMap::new();
    for partition in 1..=FIVE.partitions {
        let activations = committed.entry(partition).or_default();
        for record in cluster.records(partition).await {
            if record.intent != JobBatchIntent::Activated.into() {
                continue;
            }
            let Some(batch) = record.value_as::<JobBatchRecord>() else {
                continue;
            };
            for (key, job) in batch.job_keys.iter().zip(&batch.jobs) {
                activations.insert((*key, job.deadline));
            }
        }
    }
    let mut by_job: HashMap<i64, Vec<&Held>> = HashMap::new();
    for h in &held {
        let partition = key::partition_of(h.key).expect("partition");
        assert!(
            committed[&partition].contains(&(h.key, h.deadline)),
            "{h:?} was handed out without a committed activation"
        );
        by_job.entry(h.key).or_default().push(h);
    }
    let mut again = 0;
    for (job, mut holds) in by_job {
        holds.sort_by_key(|h| h.deadline);
        for pair in holds.windows(2) {
            again += 1;
            assert!(
                pair[1].deadline - HELD >= pair[0].deadline,
                "job {job} was handed to {} while {} held it: {pair:?}",
                pair[1].worker,
                pair[0].worker
            );
        }
    }
    let instances_held: HashSet<i64> = held.iter().map(|h| h.instance).collect();
    assert!(instances.iter().all(|k| instances_held.contains(k)));
    eprintln!(
        "{} instances, {} jobs handed out, {again} handed again after their hold ended",
        instances.len(),
        held.len()
    );
}

/// Each job activation in `records`: (job key, instance, deadline).
fn activations(records: &[Record]) -> Vec<(i64, i64, i64)> {
    records
        .iter()
        .filter(|r| r.intent == JobBatchIntent::Activated.into())
        .filter_map(|r| r.value_as::<JobBatchRecord>())
        .flat_map(|batch| {
            batch
                .job_keys
                .iter()
                .zip(&batch.jobs)
                .map(|(key, job)| (*key, job.process_instance_key, job.deadline))
        })
        .collect()
}

fn count(records: &[Record], key: i64, intent: impl Into<Intent>) -> usize {
    let intent = intent.into();
    records
        .iter()
        .filter(|r| r.key == key && r.intent == intent && r.is_event())
        .count()
}

/// Waits for `instance` to complete; its job was yielded once and completed once. The
/// partition's records.
async fn yielded_and_completed_once(
    cluster: &TestCluster,
    partition: u16,
    instance: i64,
    job: i64,
) -> Vec<Record> {
    cluster
        .await_records(partition, "the instance completes", |records| {
            completed(records, instance)
        })
        .await;
    let records = cluster.records(partition).await;
    assert_eq!(count(&records, job, JobIntent::Yielded), 1, "yielded once");
    assert_eq!(
        count(&records, job, JobIntent::Completed),
        1,
        "completed once"
    );
    records
}

/// Has the leader of `partition` (on broker `leader`) create an instance of `process` whose job
/// is activated for a stream, and commit it without learning of the commit (its side effects
/// held from now on, as when its quorum's acknowledgements are lost), so the push is never
/// made; waits until `follower` holds the activation committed. The job, its instance and the
/// activation's deadline.
async fn activate_without_pushing(
    cluster: &TestCluster,
    leader: usize,
    follower: usize,
    partition: u16,
    process: &str,
) -> (i64, i64, i64) {
    let handle = cluster
        .broker(leader)
        .local
        .partition(partition)
        .expect("the leader's replica");
    let before = activations(&cluster.records_on(follower, partition).await).len();
    handle.hold_side_effects(true).await;
    let creation = Record::command(
        -1,
        ProcessInstanceCreationIntent::Create,
        ProcessInstanceCreationRecord {
            bpmn_process_id: process.into(),
            version: -1,
            variables: b"{}".to_vec(),
            ..ProcessInstanceCreationRecord::default()
        },
    );
    let _unanswered = handle
        .submit(creation)
        .expect("the leader takes the command");
    for _ in 0..400 {
        let committed = activations(&cluster.records_on(follower, partition).await);
        if committed.len() > before {
            return *committed.last().expect("an activation");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the activation is not committed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_activated_for_a_push_by_a_leader_that_steps_down_before_pushing_goes_to_the_next_leader_at_once()
 {
    let cluster = TestCluster::start(THREE, gateway_config()).await;
    let partition = 1;
    let leader = cluster.leader_of(partition).expect("a leader");
    let worker = (leader + 1) % THREE.brokers as usize;
    let follower = (leader + 2) % THREE.brokers as usize;
    eprintln!(
        "partition {partition} led by broker {leader}; the worker streams through broker {worker}"
    );
    let mut client = cluster.client(worker).await;
    deploy(&mut client, "pushed", &work("pushed", "pushed")).await;
    // Held far longer than the test runs: only a yield can bring a job back in time.
    const HELD: i64 = 60_000;
    let mut stream = open_stream(&mut client, "pushed", "streamer", HELD).await;
    await_registered(&cluster).await;
    // Pushed from the partition's leader to the worker's broker, as usual.
    let (instance, _) = create_on(&mut client, "pushed", partition).await;
    let first = await_job(&mut stream, instance).await;
    complete(&mut client, first.key).await;

    // The leader commits a job's activation for the stream without learning of the commit
    // (its side effects held, as when its quorum's acknowledgements are lost), so it never
    // pushes it.
    let (job, instance, deadline) =
        activate_without_pushing(&cluster, leader, follower, partition, "pushed").await;
    assert!(
        tokio::time::timeout(Duration::from_millis(500), stream.message())
            .await
            .is_err(),
        "nothing is pushed while the leader holds its side effects"
    );

    // The leader's heartbeats stop: the others elect a new leader, and the old one steps down
    // holding the push it never made.
    let stepped_down = Instant::now();
    let group = cluster.broker(leader).groups[&partition].clone();
    group.raft().runtime_config().heartbeat(false);
    let mut next = None;
    for _ in 0..600 {
        if let Some(now) = cluster.leader_of(partition).filter(|n| *n != leader) {
            next = Some(now);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let next = next.expect("another broker leads the partition");
    let elected = stepped_down.elapsed();
    group.raft().runtime_config().heartbeat(true);

    // The job is yielded to the new leader and reaches the worker again, far within its hold.
    let again = await_job(&mut stream, instance).await;
    let back = stepped_down.elapsed();
    eprintln!(
        "broker {next} leads after {} ms; the job is with the worker again after {} ms (held {HELD} ms)",
        elected.as_millis(),
        back.as_millis()
    );
    assert_eq!(again.key, job);
    assert!(again.deadline > deadline, "activated again: {again:?}");
    assert!(
        back < Duration::from_secs(10),
        "the job came back after {back:?}, not at once"
    );
    complete(&mut client, job).await;

    let records = yielded_and_completed_once(&cluster, partition, instance, job).await;
    let activated = activations(&records)
        .into_iter()
        .filter(|(key, ..)| *key == job)
        .count();
    assert_eq!(
        activated, 2,
        "activated for the push, then again after the yield"
    );
}

/// The HTTP/2 window a slow worker's connection grants a stream (a gRPC client's default is
/// 64 KiB, tonic's 2 MiB): past it, what the worker does not read waits at the gateway, as
/// with any client once its window is full. Small, so that a few jobs fill it.
const WINDOW: u32 = 256;

/// A client on broker `node` whose connection takes at most [`WINDOW`] bytes of a stream it
/// does not read.
async fn windowed_client(cluster: &TestCluster, node: usize) -> GatewayClient<Channel> {
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://{}", cluster.broker(node).grpc))
            .expect("an address")
            .initial_stream_window_size(WINDOW)
            .connect()
            .await
            .expect("gateway connects");
    GatewayClient::new(channel)
}

/// Jobs pushed by every partition's leader so far.
fn pushed_total(cluster: &TestCluster) -> u64 {
    (1..=cluster.shape.partitions)
        .filter_map(|p| {
            cluster
                .leader_of(p)
                .map(|leader| pushed(cluster, leader, p))
        })
        .sum()
}

/// Activates `job_type` jobs through `client` for `within`: every job activated, and when
/// the last came (since `since`).
async fn activate_for(
    client: &mut GatewayClient<Channel>,
    job_type: &str,
    since: Instant,
    within: Duration,
) -> (Vec<ActivatedJob>, Duration) {
    let deadline = Instant::now() + within;
    let mut jobs = Vec::new();
    let mut last = Duration::ZERO;
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = left.as_millis().clamp(1, 500) as i64;
        match activate(client, job_type, "poller", 60_000, 64, wait).await {
            Ok(activated) => {
                if !activated.is_empty() {
                    last = since.elapsed();
                }
                jobs.extend(activated);
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    (jobs, last)
}

/// A worker reads one job, stops reading while more are pushed to it, and goes away: its
/// stream dropped (`disconnect` false) or its whole connection. Every job it never read is
/// activatable again within a few seconds, far within its hold, except those already in its
/// own connection (delivered, as Zeebe counts them: they wait for their deadline); then every
/// instance completes, each job once.
async fn a_worker_that_stops_reading_and_goes_away(disconnect: bool) {
    let cluster = TestCluster::start(THREE, gateway_config()).await;
    let worker = cluster.follower_broker();
    let poller = (worker + 1) % THREE.brokers as usize;
    eprintln!("the worker streams through broker {worker}, the poller through broker {poller}");
    let mut client = cluster.client(poller).await;
    deploy(&mut client, "unread", &work("unread", "unread")).await;
    const HELD: i64 = 15_000;
    const JOBS: usize = 60;
    let mut reader = windowed_client(&cluster, worker).await;
    let mut stream = open_stream(&mut reader, "unread", "reader", HELD).await;
    await_registered(&cluster).await;
    let first = create_one(&mut client, "unread").await;
    let first = await_job(&mut stream, first).await;
    complete(&mut client, first.key).await;

    // The worker reads no more; jobs are created on every partition and pushed to it until
    // its stream is full everywhere.
    let mut instances = HashSet::new();
    for _ in 0..JOBS {
        instances.insert(create_one(&mut client, "unread").await);
    }
    let mut settled = pushed_total(&cluster);
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = pushed_total(&cluster);
        if now == settled {
            break;
        }
        settled = now;
    }
    let gone = Instant::now();
    drop(stream);
    if disconnect {
        drop(reader);
    }

    let (mut back, last) = activate_for(&mut client, "unread", gone, Duration::from_secs(4)).await;
    let back_keys: HashSet<i64> = back.iter().map(|j| j.key).collect();
    let mut records = Vec::new();
    for partition in 1..=THREE.partitions {
        records.extend(cluster.records(partition).await);
    }
    let held_by_reader: Vec<(i64, i64)> = records
        .iter()
        .filter(|r| r.intent == JobBatchIntent::Activated.into())
        .filter_map(|r| r.value_as::<JobBatchRecord>())
        .filter(|batch| batch.worker == "reader")
        .flat_map(|batch| {
            batch
                .job_keys
                .iter()
                .zip(&batch.jobs)
                .map(|(key, job)| (*key, job.process_instance_key))
                .collect::<Vec<_>>()
        })
        .filter(|(_, instance)| instances.contains(instance))
        .collect();
    let yielded = held_by_reader
        .iter()
        .filter(|(key, _)| count(&records, *key, JobIntent::Yielded) > 0)
        .count();
    let in_connection: Vec<i64> = held_by_reader
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !back_keys.contains(key))
        .collect();
    eprintln!(
        "{JOBS} jobs: {} pushed to the worker and unread, {yielded} of them yielded; {} activatable \
         again, the last {} ms after the worker went away; {} left in the worker's connection",
        held_by_reader.len(),
        back.len(),
        last.as_millis(),
        in_connection.len()
    );
    assert!(
        held_by_reader.len() > in_connection.len() + 8,
        "the worker's stream held jobs at the gateway: {} pushed, {} in its connection",
        held_by_reader.len(),
        in_connection.len()
    );
    // The worker's window holds this many whole jobs; the gateway's transport one more, and
    // the one the window ends in.
    let in_window = WINDOW as usize / prost::Message::encoded_len(&first);
    assert!(
        in_connection.len() <= in_window + 2,
        "at most what the worker's connection holds ({in_window} jobs in its window, two in the \
         gateway's transport) waits for its deadline: {in_connection:?}"
    );

    // What the worker's connection held comes back at its deadline; every instance completes.
    let seen: HashSet<i64> = back.iter().map(|j| j.process_instance_key).collect();
    let rest: HashSet<i64> = instances.difference(&seen).copied().collect();
    if !rest.is_empty() {
        back.extend(
            activate_all(
                &mut client,
                "unread",
                &rest,
                Duration::from_millis(HELD as u64 + 15_000),
            )
            .await,
        );
    }
    for job in &back {
        complete(&mut client, job.key).await;
    }
    for partition in 1..=THREE.partitions {
        let mine: Vec<i64> = instances
            .iter()
            .copied()
            .filter(|k| key::partition_of(*k) == Some(partition))
            .collect();
        cluster
            .await_records(partition, "every instance completes", |records| {
                mine.iter().all(|k| completed(records, *k))
            })
            .await;
        let records = cluster.records(partition).await;
        for job in back
            .iter()
            .filter(|j| key::partition_of(j.key) == Some(partition))
        {
            assert_eq!(
                count(&records, job.key, JobIntent::Completed),
                1,
                "job {} completed once",
                job.key
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_pushed_to_a_stream_its_client_drops_unread_are_activatable_again_at_once() {
    a_worker_that_stops_reading_and_goes_away(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_pushed_to_a_worker_that_stops_reading_and_disconnects_are_activatable_again_at_once()
{
    a_worker_that_stops_reading_and_goes_away(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_shut_down_with_a_push_not_made_yields_its_job_before_it_stops() {
    let mut cluster = TestCluster::start(THREE, gateway_config()).await;
    let partition = 1;
    let leader = cluster.leader_of(partition).expect("a leader");
    let worker = (leader + 1) % THREE.brokers as usize;
    eprintln!("partition {partition} led by broker {leader}; the worker streams through {worker}");
    let mut client = cluster.client(worker).await;
    deploy(&mut client, "stopping", &work("stopping", "stopping")).await;
    // Held far longer than the test runs: only a yield can bring a job back in time.
    const HELD: i64 = 60_000;
    let mut stream = open_stream(&mut client, "stopping", "streamer", HELD).await;
    await_registered(&cluster).await;
    let (instance, _) = create_on(&mut client, "stopping", partition).await;
    let first = await_job(&mut stream, instance).await;
    complete(&mut client, first.key).await;

    // The leader commits a job's activation for the stream without learning of the commit,
    // so the push is still to be made when its broker is asked to stop.
    let follower = (leader + 2) % THREE.brokers as usize;
    let (job, instance, deadline) =
        activate_without_pushing(&cluster, leader, follower, partition, "stopping").await;

    let stopping = Instant::now();
    cluster.shut_down(leader).await;
    let stopped = stopping.elapsed();
    cluster.await_leaders().await;
    let mut poller = cluster.client(follower).await;
    let mut again = None;
    while stopping.elapsed() < Duration::from_secs(15) {
        if let Ok(jobs) = activate(&mut poller, "stopping", "poller", HELD, 1, 500).await
            && let Some(found) = jobs.into_iter().find(|j| j.key == job)
        {
            again = Some(found);
            break;
        }
    }
    let again = again.unwrap_or_else(|| {
        panic!("job {job} was not activatable again within 15 s (held {HELD} ms)")
    });
    eprintln!(
        "broker {leader} stopped in {} ms; the job was activatable again after {} ms (held {HELD} ms)",
        stopped.as_millis(),
        stopping.elapsed().as_millis()
    );
    assert!(again.deadline > deadline, "activated again: {again:?}");
    complete(&mut poller, job).await;
    yielded_and_completed_once(&cluster, partition, instance, job).await;
}
