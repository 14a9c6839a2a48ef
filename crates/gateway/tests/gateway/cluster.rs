//! Several brokers in one process, each with its own partitions (placed round-robin, one
//! replica each), internal API, membership and gateway, wired as `beeline broker` wires them:
//! the topology every broker reports, commands forwarded to the broker that leads their
//! partition, commands between partitions on different brokers (through a restart of one and
//! with commands lost on the way), and job activation and streaming across brokers.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use beeline_cluster::transport::{Groups, InternalServer, Peers};
use beeline_cluster::{
    BrokerInfo, BrokerServices, ClusterRouter, ClusterSettings, Health, Membership,
    MembershipConfig, PartitionState, Role,
};
use beeline_gateway::proto::gateway_client::GatewayClient;
use beeline_gateway::proto::partition::{PartitionBrokerHealth, PartitionBrokerRole};
use beeline_gateway::proto::*;
use beeline_gateway::routing::message_partition;
use beeline_gateway::{Cluster, Gateway, GatewayConfig, NodeInfo, PartitionSlot};
use beeline_log::MemJournal;
use beeline_protocol::key;
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
use beeline_stream::testkit::bpmn::{ProcessBuilder, signal_ref};
use beeline_stream::{
    CommandRouter, ControlledClock, JobStreams, LocalRouter, Partition, PartitionConfig,
    PartitionHandle,
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

use super::{create, resource};

const PARTITIONS: u16 = 3;
const BROKERS: u64 = 3;

/// One broker: its partitions, its internal API and gateway.
struct Broker {
    grpc: SocketAddr,
    membership: Arc<Membership>,
    local: Arc<LocalRouter>,
    partitions: Vec<PartitionHandle>,
    tasks: Vec<JoinHandle<()>>,
    stop_gateway: Option<oneshot::Sender<()>>,
    /// Ends the internal API's server: its connections close (GOAWAY), as a dead process's
    /// would, so the others connect to whatever listens on the port next.
    stop_internal: Option<oneshot::Sender<()>>,
    internal_server: Option<JoinHandle<()>>,
}

/// Brokers 0, 1 and 2 with partitions 1, 2 and 3 (partition p on broker p - 1).
struct TestCluster {
    brokers: Vec<Option<Broker>>,
    internal: Vec<SocketAddr>,
    journals: HashMap<u16, MemJournal>,
    clock: ControlledClock,
    dir: tempfile::TempDir,
}

fn settings(node: u64, internal: &[SocketAddr]) -> ClusterSettings {
    ClusterSettings {
        node_id: node,
        cluster_size: BROKERS as u32,
        partitions: u32::from(PARTITIONS),
        replication_factor: 1,
        contact_points: internal.iter().map(|a| a.to_string()).collect(),
        internal_port: internal[node as usize].port(),
        cluster_name: "test".into(),
    }
}

pub(super) fn info(settings: &ClusterSettings, grpc: SocketAddr) -> BrokerInfo {
    BrokerInfo {
        node_id: settings.node_id,
        cluster_name: settings.cluster_name.clone(),
        cluster_size: settings.cluster_size,
        partitions_count: settings.partitions,
        replication_factor: settings.replication_factor,
        version: "test".into(),
        host: "127.0.0.1".into(),
        grpc_port: grpc.port(),
        rest_port: 0,
        internal_address: format!("127.0.0.1:{}", settings.internal_port),
        partitions: Vec::new(),
    }
}

pub(super) fn fast() -> MembershipConfig {
    MembershipConfig {
        interval: Duration::from_millis(100),
        failure_timeout: Duration::from_millis(1000),
        ..MembershipConfig::default()
    }
}

impl TestCluster {
    async fn start() -> Self {
        let mut listeners = Vec::new();
        for _ in 0..BROKERS {
            let port = beeline_ports::free_port().expect("a free port");
            listeners.push(
                tokio::net::TcpListener::bind(("127.0.0.1", port))
                    .await
                    .expect("internal port"),
            );
        }
        let internal = listeners
            .iter()
            .map(|l| l.local_addr().expect("address"))
            .collect();
        let mut cluster = Self {
            brokers: Vec::new(),
            internal,
            journals: HashMap::new(),
            clock: ControlledClock::new(1_700_000_000_000),
            dir: tempfile::tempdir().expect("temporary directory"),
        };
        for (node, listener) in listeners.into_iter().enumerate() {
            let broker = cluster.start_broker(node as u64, listener).await;
            cluster.brokers.push(Some(broker));
        }
        cluster.await_topology().await;
        cluster
    }

    async fn start_broker(&mut self, node: u64, listener: tokio::net::TcpListener) -> Broker {
        let settings = settings(node, &self.internal);
        let grpc_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("gRPC port");
        let grpc = grpc_listener.local_addr().expect("address");
        let membership = Membership::new(
            info(&settings, grpc),
            settings.contact_points.clone(),
            Peers::new(settings.node_id),
            fast(),
        );
        let local = LocalRouter::new();
        let router = ClusterRouter::new(local.clone(), membership.clone());
        let job_streams = JobStreams::new();
        let mine = settings.local_partitions();
        let mut partitions = Vec::new();
        let mut slots = Vec::new();
        let mut states = Vec::new();
        for id in 1..=PARTITIONS {
            if !mine.contains(&u32::from(id)) {
                slots.push(PartitionSlot::Elsewhere);
                continue;
            }
            let journal = self.journals.entry(id).or_default().clone();
            let handle = self.open_partition(id, journal, router.clone(), job_streams.clone());
            local.set_partition(handle.clone());
            slots.push(PartitionSlot::Open(handle.clone()));
            partitions.push(handle);
            states.push(PartitionState {
                partition_id: u32::from(id),
                role: Role::Leader,
                term: 1,
                health: Health::Healthy,
            });
        }
        membership.set_partitions(states);
        let services = Arc::new(BrokerServices {
            membership: membership.clone(),
            router: router.clone(),
            job_streams: job_streams.clone(),
            executor: std::sync::OnceLock::new(),
        });
        let mut tasks = Vec::new();
        let service = InternalServer::broker(Groups::default(), services.clone());
        let (stop_internal, internal_stopped) = oneshot::channel::<()>();
        let peers = membership.peers().clone();
        let internal_server = tokio::spawn(async move {
            let _ = beeline_cluster::transport::serve(listener, service, peers, async {
                let _ = internal_stopped.await;
            })
            .await;
        });
        tasks.push(tokio::spawn(membership.clone().run()));
        let node_info = NodeInfo {
            node_id: node as i32,
            host: "127.0.0.1".into(),
            port: grpc.port(),
            version: "test".into(),
        };
        let gateway = Gateway::new(
            Cluster::single_node(node_info, slots)
                .with_job_streams(job_streams)
                .with_membership(membership.clone()),
            GatewayConfig {
                request_timeout: Duration::from_secs(5),
                job_probe_interval: Duration::from_secs(30),
                ..GatewayConfig::default()
            },
        );
        let _ = services.executor.set(gateway.executor());
        router.exchange_job_notices(partitions.clone(), gateway.jobs_available());
        let (stop_gateway, stopped) = oneshot::channel::<()>();
        tasks.push(tokio::spawn(async move {
            let stopped = async {
                let _ = stopped.await;
            };
            let _ = gateway.serve(grpc_listener, None, stopped).await;
        }));
        Broker {
            grpc,
            membership,
            local,
            partitions,
            tasks,
            stop_gateway: Some(stop_gateway),
            stop_internal: Some(stop_internal),
            internal_server: Some(internal_server),
        }
    }

    fn open_partition(
        &self,
        id: u16,
        journal: MemJournal,
        router: Arc<ClusterRouter>,
        job_streams: Arc<JobStreams>,
    ) -> PartitionHandle {
        let mut config = PartitionConfig::new(id);
        config.partition_count = PARTITIONS;
        config.snapshot_period = None;
        config.job_streams = Some(job_streams);
        let snapshots = SnapshotStore::open(self.dir.path().join(format!("partition-{id}")), 2)
            .expect("snapshot store");
        let opener = |_: Option<&std::path::Path>| -> beeline_state::Result<Arc<dyn Store>> {
            Ok(Arc::new(MemStore::new()))
        };
        let router: Arc<dyn CommandRouter> = router;
        Partition::open(
            config,
            journal,
            snapshots,
            &opener,
            Arc::new(self.clock.clone()),
            Some(router),
        )
        .expect("partition opens")
    }

    fn broker(&self, node: usize) -> &Broker {
        self.brokers[node].as_ref().expect("broker runs")
    }

    async fn client(&self, node: usize) -> GatewayClient<Channel> {
        GatewayClient::connect(format!("http://{}", self.broker(node).grpc))
            .await
            .expect("gateway connects")
    }

    /// Waits until every running broker sees every running broker lead its partitions.
    async fn await_topology(&self) {
        let running: Vec<u64> = (0..BROKERS)
            .filter(|n| self.brokers[*n as usize].is_some())
            .collect();
        for _ in 0..200 {
            let complete = running.iter().all(|node| {
                let view = self.broker(*node as usize).membership.view();
                (1..=u32::from(PARTITIONS)).all(|p| {
                    let owner = u64::from(p - 1) % BROKERS;
                    !running.contains(&owner)
                        || view.leader(p).is_some_and(|leader| leader.node == owner)
                })
            });
            if complete {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the brokers did not find each other");
    }

    /// Stops broker `node` as a crash would: its partitions halt (they keep their logs),
    /// its servers go away.
    async fn crash(&mut self, node: usize) {
        let mut broker = self.brokers[node].take().expect("broker runs");
        let _ = broker.stop_gateway.take().map(|stop| stop.send(()));
        let _ = broker.stop_internal.take().map(|stop| stop.send(()));
        for task in broker.tasks.drain(..) {
            task.abort();
            let _ = task.await;
        }
        if let Some(server) = broker.internal_server.take() {
            let abort = server.abort_handle();
            if tokio::time::timeout(Duration::from_secs(1), server)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        for handle in &broker.partitions {
            handle.halt().await;
        }
    }

    /// Starts broker `node` again from its partitions' logs, on its internal port.
    async fn restart(&mut self, node: usize) {
        let mut listener = None;
        for _ in 0..100 {
            match tokio::net::TcpListener::bind(self.internal[node]).await {
                Ok(bound) => {
                    listener = Some(bound);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        let listener = listener.expect("the internal port is free again");
        let broker = self.start_broker(node as u64, listener).await;
        self.brokers[node] = Some(broker);
        self.await_topology().await;
    }

    async fn deploy(&self, node: usize, name: &str, content: &str) -> DeployResourceResponse {
        self.client(node)
            .await
            .deploy_resource(DeployResourceRequest {
                resources: vec![resource(name, content)],
                tenant_id: String::new(),
            })
            .await
            .expect("deployed")
            .into_inner()
    }

    /// Creates instances through broker `node` until one lands on `partition`; `variables`
    /// makes each attempt's variables. Returns the instance and the attempt that made it.
    async fn create_on(
        &self,
        node: usize,
        partition: u16,
        process: &str,
        variables: impl Fn(usize) -> String,
    ) -> (i64, usize) {
        let mut client = self.client(node).await;
        for attempt in 0..200 {
            match client
                .create_process_instance(create(process, &variables(attempt)))
                .await
            {
                Ok(created) => {
                    let key = created.into_inner().process_instance_key;
                    if key::partition_of(key) == Some(partition) {
                        return (key, attempt);
                    }
                }
                // The deployment is still on its way to the partition it landed on.
                Err(status) if status.code() == tonic::Code::NotFound => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(status) => panic!("creation failed: {status:?}"),
            }
        }
        panic!("no instance landed on partition {partition}");
    }

    /// The committed records of `partition`, from the broker that holds it.
    async fn records(&self, partition: u16) -> Vec<beeline_protocol::Record> {
        let node = usize::from(partition - 1) % BROKERS as usize;
        let handle = self.broker(node).local.partition(partition).expect("held");
        handle.sync().await.expect("partition syncs");
        let mut reader = handle.reader().await.expect("reader");
        let mut records = Vec::new();
        while let Some(record) = reader.next_record().expect("readable log") {
            records.push(record);
        }
        records
    }

    /// Waits until `check` holds for the records of `partition`.
    async fn await_records(
        &self,
        partition: u16,
        what: &str,
        check: impl Fn(&[beeline_protocol::Record]) -> bool,
    ) {
        for _ in 0..200 {
            if check(&self.records(partition).await) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        for record in self.records(partition).await {
            eprintln!(
                "{:>4} {:?} {} {}",
                record.position,
                record.record_type,
                beeline_gateway_intent(record.intent),
                record.rejection_reason
            );
        }
        panic!("partition {partition}: {what}");
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        for broker in self.brokers.iter_mut().flatten() {
            for task in broker.tasks.iter().chain(&broker.internal_server) {
                task.abort();
            }
        }
    }
}

fn completed(records: &[beeline_protocol::Record], instance: i64) -> bool {
    records.iter().any(|r| {
        r.key == instance
            && r.intent == beeline_protocol::intent::ProcessInstanceIntent::ElementCompleted.into()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_broker_reports_the_whole_cluster_in_its_topology() {
    let cluster = TestCluster::start().await;
    for node in 0..BROKERS as usize {
        let topology = cluster
            .client(node)
            .await
            .topology(TopologyRequest {})
            .await
            .expect("topology")
            .into_inner();
        assert_eq!(
            (
                topology.cluster_size,
                topology.partitions_count,
                topology.replication_factor
            ),
            (3, 3, 1)
        );
        assert_eq!(topology.brokers.len(), 3, "broker {node} sees every broker");
        for (index, broker) in topology.brokers.iter().enumerate() {
            assert_eq!(broker.node_id, index as i32);
            assert_eq!(broker.port, cluster.broker(index).grpc.port() as i32);
            let partitions: Vec<(i32, i32, i32)> = broker
                .partitions
                .iter()
                .map(|p| (p.partition_id, p.role, p.health))
                .collect();
            assert_eq!(
                partitions,
                vec![(
                    index as i32 + 1,
                    PartitionBrokerRole::Leader as i32,
                    PartitionBrokerHealth::Healthy as i32
                )],
                "round-robin: partition {} on broker {index}",
                index + 1
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_whose_settings_contradict_the_cluster_does_not_join() {
    let cluster = TestCluster::start().await;
    let mut other = settings(1, &cluster.internal);
    other.partitions = 4;
    let stranger = Membership::new(
        BrokerInfo {
            node_id: 7,
            ..info(&other, "127.0.0.1:1".parse().expect("address"))
        },
        vec![cluster.internal[0].to_string()],
        Peers::new(7),
        fast(),
    );
    stranger.gossip_round().await;
    let refused = stranger.refused().borrow().clone().expect("refused");
    assert_eq!(refused.setting, "partitions", "{refused}");
    assert!(refused.reason.contains("this broker has 4"), "{refused}");
    assert!(refused.reason.contains("broker 0"), "{refused}");
    // ... and the cluster did not take it in.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(cluster.broker(0).membership.view().brokers.len(), 3);
}

/// A broker that takes connections and never answers (a frozen process: the kernel accepts,
/// nothing reads) holds the push to it until its hello times out; the other brokers hear of a
/// change at once all the same, not when that push gives up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_broker_delays_nothing_the_others_learn_by_gossip() {
    // Pushes every 5 s: only a change is pushed in between.
    let slow = MembershipConfig {
        interval: Duration::from_secs(5),
        failure_timeout: Duration::from_secs(60),
        ..MembershipConfig::default()
    };
    let hung = std::net::TcpListener::bind("127.0.0.1:0").expect("the hung broker's port");
    let hung = hung.local_addr().expect("address");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("an internal port");
    let internal = [
        "127.0.0.1:1".parse().expect("address"),
        listener.local_addr().expect("address"),
    ];
    let grpc = "127.0.0.1:2".parse().expect("address");
    let peer = Membership::new(
        info(&settings(1, &internal), grpc),
        Vec::new(),
        Peers::new(1),
        slow,
    );
    let services = Arc::new(BrokerServices {
        membership: peer.clone(),
        router: ClusterRouter::new(LocalRouter::new(), peer.clone()),
        job_streams: JobStreams::new(),
        executor: std::sync::OnceLock::new(),
    });
    let service = InternalServer::broker(Groups::default(), services);
    let served = tokio::spawn(beeline_cluster::transport::serve(
        listener,
        service,
        peer.peers().clone(),
        std::future::pending(),
    ));
    let pusher = Membership::new(
        info(&settings(0, &internal), grpc),
        vec![hung.to_string(), internal[1].to_string()],
        Peers::new(0),
        slow,
    );
    let gossip = tokio::spawn(pusher.clone().run());
    // What broker 1 knows of broker 0: whether it knows it, and the terms it leads in.
    let heard = || {
        let view = peer.view();
        let broker = view.brokers.iter().find(|b| b.node_id == 0)?;
        Some(broker.partitions.iter().map(|p| p.term).collect::<Vec<_>>())
    };
    for _ in 0..250 {
        if heard().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(heard(), Some(Vec::new()), "broker 1 hears of broker 0");
    // The first push to the hung broker waits for its hello (2 s) meanwhile.
    let changed = std::time::Instant::now();
    pusher.set_partitions(vec![PartitionState {
        partition_id: 1,
        role: Role::Leader,
        term: 7,
        health: Health::Healthy,
    }]);
    while heard() != Some(vec![7]) && changed.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let took = changed.elapsed();
    assert_eq!(heard(), Some(vec![7]), "broker 1 hears of the change");
    assert!(
        took < Duration::from_millis(1000),
        "the change reached broker 1 in {took:?}, not when the push to the hung broker gave up"
    );
    gossip.abort();
    served.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_broker_serves_every_partition_and_partitions_talk_across_brokers() {
    let cluster = TestCluster::start().await;
    let process = ProcessBuilder::new("order")
        .message("paid", Some("=orderId"))
        .start_event("start")
        .receive_task("await-payment", "paid")
        .service_task("ship", "ship")
        .end_event("end")
        .build();
    // Deployed through broker 2: partition 1 (broker 0) distributes it to brokers 1 and 2.
    cluster.deploy(2, "order.bpmn", &process).await;
    // Instances on every partition, each created through a broker that does not hold it.
    let mut instances = Vec::new();
    for partition in 1..=PARTITIONS {
        let through = usize::from(partition) % BROKERS as usize;
        let order = |attempt| format!("order-{partition}-{attempt}");
        let (key, attempt) = cluster
            .create_on(through, partition, "order", |attempt| {
                format!(r#"{{"orderId": "{}"}}"#, order(attempt))
            })
            .await;
        instances.push((partition, order(attempt), key));
    }
    // Each payment goes to the partition of its correlation key, through broker 0; the
    // subscription lives there and the instance may be on any broker.
    for (partition, order, _) in &instances {
        let message_partition = message_partition(order, PARTITIONS);
        eprintln!("instance on {partition}, its message on {message_partition}");
        cluster
            .client(0)
            .await
            .publish_message(PublishMessageRequest {
                name: "paid".into(),
                correlation_key: order.clone(),
                time_to_live: 60_000,
                message_id: String::new(),
                variables: "{}".into(),
                tenant_id: String::new(),
            })
            .await
            .expect("published");
    }
    // Broker 1's worker gets the ship jobs of every partition.
    let mut client = cluster.client(1).await;
    let mut jobs = Vec::new();
    for _ in 0..50 {
        let mut stream = client
            .activate_jobs(ActivateJobsRequest {
                r#type: "ship".into(),
                worker: "w".into(),
                timeout: 30_000,
                max_jobs_to_activate: 10,
                request_timeout: 500,
                ..ActivateJobsRequest::default()
            })
            .await
            .expect("activate")
            .into_inner();
        while let Some(response) = stream.message().await.expect("jobs") {
            jobs.extend(response.jobs);
        }
        if jobs.len() >= instances.len() {
            break;
        }
    }
    let mut partitions: Vec<u16> = jobs
        .iter()
        .filter_map(|job| key::partition_of(job.key))
        .collect();
    partitions.sort_unstable();
    assert_eq!(partitions, vec![1, 2, 3], "a job from every partition");
    for job in &jobs {
        cluster
            .client(2)
            .await
            .complete_job(CompleteJobRequest {
                job_key: job.key,
                variables: String::new(),
                result: None,
            })
            .await
            .expect("completed");
    }
    for (partition, _, key) in &instances {
        cluster
            .await_records(*partition, "the instance completes", |records| {
                completed(records, *key)
            })
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_reach_every_partition_across_brokers() {
    let cluster = TestCluster::start().await;
    let process = ProcessBuilder::new("signalled")
        .signal("go")
        .start_event("start")
        .catch_event("wait", &signal_ref("go"))
        .end_event("end")
        .build();
    cluster.deploy(1, "signalled.bpmn", &process).await;
    let mut instances = Vec::new();
    for partition in 1..=PARTITIONS {
        let (key, _) = cluster
            .create_on(0, partition, "signalled", |_| "{}".into())
            .await;
        instances.push((partition, key));
    }
    for partition in 1..=PARTITIONS {
        cluster
            .await_records(partition, "the instances wait for the signal", |records| {
                records.iter().any(|r| {
                    r.intent == beeline_protocol::intent::SignalSubscriptionIntent::Created.into()
                })
            })
            .await;
    }
    cluster
        .client(2)
        .await
        .broadcast_signal(BroadcastSignalRequest {
            signal_name: "go".into(),
            variables: "{}".into(),
            tenant_id: String::new(),
        })
        .await
        .expect("broadcast");
    for (partition, key) in instances {
        cluster
            .await_records(partition, "the signal completes the instance", |records| {
                completed(records, key)
            })
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exchanges_between_partitions_survive_lost_commands_and_a_broker_restart() {
    let mut cluster = TestCluster::start().await;
    let process = ProcessBuilder::new("order")
        .message("paid", Some("=orderId"))
        .start_event("start")
        .receive_task("await-payment", "paid")
        .end_event("end")
        .build();
    // Broker 2 loses what reaches partition 3: the deployment does not arrive there.
    cluster.broker(2).local.cut_off(3, true);
    cluster.deploy(0, "order.bpmn", &process).await;
    cluster
        .await_records(2, "the deployment reaches partition 2", |records| {
            records.iter().any(|r| {
                r.intent == beeline_protocol::intent::DeploymentIntent::Created.into()
                    && r.partition_id == 2
            })
        })
        .await;
    assert!(
        !cluster
            .records(3)
            .await
            .iter()
            .any(|r| r.intent == beeline_protocol::intent::DeploymentIntent::Created.into()),
        "lost on the way"
    );
    // Broker 2 crashes and comes back; the sender sends again once its resend time passed.
    cluster.crash(2).await;
    cluster.restart(2).await;
    cluster.clock.advance(11_000);
    let sender = cluster.broker(0).local.partition(1).expect("partition 1");
    sender.run_scheduler().await.expect("resend");
    cluster
        .await_records(3, "the deployment arrives after the restart", |records| {
            records
                .iter()
                .any(|r| r.intent == beeline_protocol::intent::DeploymentIntent::Created.into())
        })
        .await;
    // A correlation across brokers: an instance on partition 3 (broker 2), its message on
    // another partition; the first correlation attempt is lost, the resend delivers it.
    let mut landed = None;
    for round in 0..20 {
        let order = |attempt| format!("o-{round}-{attempt}");
        let (instance, attempt) = cluster
            .create_on(1, 3, "order", |attempt| {
                format!(r#"{{"orderId": "{}"}}"#, order(attempt))
            })
            .await;
        if message_partition(&order(attempt), PARTITIONS) != 3 {
            landed = Some((instance, order(attempt)));
            break;
        }
    }
    let (instance, order) = landed.expect("an instance on 3 whose message is elsewhere");
    // The subscription reaches the message partition before partition 3 is cut off again.
    let message_partition = message_partition(&order, PARTITIONS);
    cluster
        .await_records(message_partition, "the subscription is opened", |records| {
            records.iter().any(|r| {
                r.intent == beeline_protocol::intent::MessageSubscriptionIntent::Created.into()
                    && matches!(&r.value,
                        beeline_protocol::value::RecordValue::MessageSubscription(s)
                            if s.correlation_key == order)
            })
        })
        .await;
    cluster.broker(2).local.cut_off(3, true);
    cluster
        .client(1)
        .await
        .publish_message(PublishMessageRequest {
            name: "paid".into(),
            correlation_key: order.clone(),
            time_to_live: 60_000,
            message_id: String::new(),
            variables: "{}".into(),
            tenant_id: String::new(),
        })
        .await
        .expect("published");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !completed(&cluster.records(3).await, instance),
        "the correlation was lost"
    );
    cluster.broker(2).local.cut_off(3, false);
    cluster.clock.advance(11_000);
    let node = usize::from(message_partition - 1) % BROKERS as usize;
    let sender = cluster
        .broker(node)
        .local
        .partition(message_partition)
        .expect("message partition");
    sender.run_scheduler().await.expect("resend");
    cluster
        .await_records(
            3,
            "the resent correlation completes the instance",
            |records| completed(records, instance),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_stream_on_one_broker_gets_jobs_pushed_by_the_others() {
    let cluster = TestCluster::start().await;
    let process = ProcessBuilder::new("work")
        .start_event("start")
        .service_task("task", "pushed")
        .end_event("end")
        .build();
    cluster.deploy(0, "work.bpmn", &process).await;
    let mut stream = cluster
        .client(0)
        .await
        .stream_activated_jobs(StreamActivatedJobsRequest {
            r#type: "pushed".into(),
            worker: "streamer".into(),
            timeout: 30_000,
            ..StreamActivatedJobsRequest::default()
        })
        .await
        .expect("stream")
        .into_inner();
    // Registered with every broker (at once: they are all known) before the jobs are created.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut keys = Vec::new();
    for partition in 1..=PARTITIONS {
        keys.push(
            cluster
                .create_on(1, partition, "work", |_| "{}".into())
                .await
                .0,
        );
    }
    let mut partitions = Vec::new();
    while partitions.len() < keys.len() {
        let job = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("a job is pushed in time")
            .expect("stream")
            .expect("open");
        partitions.push(key::partition_of(job.key).expect("partition"));
    }
    partitions.sort_unstable();
    assert_eq!(partitions, vec![1, 2, 3], "pushed from every partition");
    // The client goes away with nothing unread; a job created after that is not lost to a
    // stream that is gone: it waits to be activated.
    drop(stream);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (late, _) = cluster.create_on(0, 3, "work", |_| "{}".into()).await;
    let mut client = cluster.client(0).await;
    let mut found = false;
    for _ in 0..40 {
        let mut jobs = client
            .activate_jobs(ActivateJobsRequest {
                r#type: "pushed".into(),
                worker: "poller".into(),
                timeout: 30_000,
                max_jobs_to_activate: 10,
                request_timeout: 200,
                ..ActivateJobsRequest::default()
            })
            .await
            .expect("activate")
            .into_inner();
        while let Some(response) = jobs.message().await.expect("jobs") {
            found |= response.jobs.iter().any(|j| j.process_instance_key == late);
        }
        if found {
            break;
        }
    }
    assert!(found, "the late job is activatable");
}

fn beeline_gateway_intent(intent: beeline_protocol::Intent) -> String {
    format!("{} {}", intent.value_type().name(), intent.name())
}
