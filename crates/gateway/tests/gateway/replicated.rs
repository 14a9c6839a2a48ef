//! Replicated partitions across brokers in one process: three brokers, every partition with a
//! replica on each (replication factor 3: a Raft group per partition over file journals), each
//! broker with its one internal API (Raft, membership, forwarded commands, commands between
//! partitions, job streams), its membership and gateway, wired as `beeline broker` wires them.
//! The topology learns each partition's leader from the replicas' role watches; a client on a
//! broker that leads nothing deploys, creates, correlates across partitions and works jobs; it
//! keeps working when a partition's leader is stopped (the gateway looks again and retries
//! within the request's time-out); a command forwarded to another broker keeps the caller's
//! tenants.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use beeline_cluster::transport::{Groups, InternalServer, Peers};
use beeline_cluster::{
    BrokerServices, ClusterRouter, ClusterSettings, Health, Membership, NodeFlusher,
    PartitionState, RaftLog, RaftLogConfig, RaftTiming,
};
use beeline_gateway::proto::gateway_client::GatewayClient;
use beeline_gateway::proto::partition::{PartitionBrokerHealth, PartitionBrokerRole};
use beeline_gateway::proto::*;
use beeline_gateway::routing::message_partition;
use beeline_gateway::{
    AuthConfig, Cluster, Gateway, GatewayConfig, NodeInfo, PartitionSlot, TenancyConfig,
};
use beeline_log::FileJournalConfig;
use beeline_protocol::key;
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
use beeline_stream::testkit::bpmn::ProcessBuilder;
use beeline_stream::{
    CommandRouter, JobStreams, LocalRouter, Partition, PartitionConfig, PartitionHandle,
    StoreOpener, SystemClock,
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

use super::cluster::{fast, info};
use super::{create, resource};

/// How many brokers and partitions, with how many replicas each.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub brokers: u64,
    pub partitions: u16,
    pub factor: u32,
}

/// Three brokers, three partitions, a replica of each on every broker.
const THREE: Shape = Shape {
    brokers: 3,
    partitions: 3,
    factor: 3,
};

/// Timeouts for a shared 2-core machine, not for speed.
const TIMING: RaftTiming = RaftTiming {
    heartbeat_ms: 100,
    election_timeout_ms: (600, 1200),
    priority_election: true,
};

/// One broker, on a runtime of its own: stopping it ends every task it started (its
/// connections close as a dead process's would), not only those the test holds.
pub(super) struct Broker {
    pub grpc: SocketAddr,
    pub membership: Arc<Membership>,
    pub local: Arc<LocalRouter>,
    /// The streams registered here: this broker's gateway's, and other gateways' streams
    /// registered by `OpenJobStream`.
    pub job_streams: Arc<JobStreams>,
    partitions: Vec<PartitionHandle>,
    /// Each local replica's Raft group, by partition (tests that steer openraft itself).
    pub groups: HashMap<u16, Arc<RaftLog>>,
    /// The same groups as the internal API serves them.
    pub raft_groups: Groups,
    tasks: Vec<JoinHandle<()>>,
    stop_gateway: Option<oneshot::Sender<()>>,
    stop_internal: Option<oneshot::Sender<()>>,
    internal_server: Option<JoinHandle<()>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Broker {
    fn drop(&mut self) {
        // Not dropped: a runtime cannot be dropped where the test's runtime may block.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

pub(super) struct TestCluster {
    pub shape: Shape,
    brokers: Vec<Option<Broker>>,
    /// Brokers stopped with their connections left hanging.
    hanging: Vec<Broker>,
    /// Each broker's internal address, which a restarted broker takes again.
    internal: Vec<SocketAddr>,
    config: GatewayConfig,
    dir: tempfile::TempDir,
}

/// Broker `node`'s settings: its one contact point is the broker before it, in a ring, so the
/// brokers learn the others' addresses (Raft's too) from each other.
fn settings(shape: Shape, node: u64, internal: &[SocketAddr]) -> ClusterSettings {
    let contact = internal[((node + shape.brokers - 1) % shape.brokers) as usize];
    ClusterSettings {
        node_id: node,
        cluster_size: shape.brokers as u32,
        partitions: u32::from(shape.partitions),
        replication_factor: shape.factor,
        contact_points: vec![contact.to_string()],
        internal_port: internal[node as usize].port(),
        cluster_name: "test".into(),
    }
}

/// What `beeline broker` publishes: each replica's role, term and health as it changes.
async fn publish(membership: Arc<Membership>, handles: Vec<PartitionHandle>) {
    loop {
        membership.set_partitions(handles.iter().map(PartitionState::of).collect());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl TestCluster {
    pub async fn start(shape: Shape, config: GatewayConfig) -> Self {
        let cluster = Self::start_without(shape, config, None).await;
        cluster.await_leaders().await;
        cluster
    }

    /// Starts every broker but `absent` (which [`restart`](Self::restart) starts later),
    /// without waiting for leaders.
    pub async fn start_without(shape: Shape, config: GatewayConfig, absent: Option<usize>) -> Self {
        let mut listeners = Vec::new();
        for _ in 0..shape.brokers {
            let port = beeline_ports::free_port().expect("a free port");
            listeners
                .push(std::net::TcpListener::bind(("127.0.0.1", port)).expect("internal port"));
        }
        let internal: Vec<SocketAddr> = listeners
            .iter()
            .map(|l| l.local_addr().expect("address"))
            .collect();
        let mut cluster = Self {
            shape,
            brokers: Vec::new(),
            hanging: Vec::new(),
            internal,
            config,
            dir: tempfile::tempdir().expect("temporary directory"),
        };
        // Every broker's replicas open at once: a group elects once a quorum of it runs.
        let starting: Vec<_> = listeners
            .into_iter()
            .enumerate()
            .map(|(node, listener)| {
                (absent != Some(node)).then(|| tokio::spawn(cluster.launch(node, listener)))
            })
            .collect();
        for broker in starting {
            let broker = match broker {
                Some(starting) => Some(starting.await.expect("broker starts")),
                None => None,
            };
            cluster.brokers.push(broker);
        }
        cluster
    }

    /// Starts broker `node` on a runtime of its own, listening on `listener` internally.
    fn launch(
        &self,
        node: usize,
        listener: std::net::TcpListener,
    ) -> impl Future<Output = Broker> + use<> {
        let settings = settings(self.shape, node as u64, &self.internal);
        let dir = self.dir.path().join(format!("broker-{node}"));
        let config = self.config.clone();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(format!("broker-{node}"))
            .enable_all()
            .build()
            .expect("a broker's runtime");
        let started = runtime.spawn(start_broker(settings, listener, dir, config));
        async move {
            let mut broker = started.await.expect("broker starts");
            broker.runtime = Some(runtime);
            broker
        }
    }

    /// Starts broker `node` again (stopped before, or not started yet), from its replicas'
    /// logs on its internal address; waits until every partition's leader is known everywhere
    /// again.
    pub async fn restart(&mut self, node: usize) {
        assert!(self.brokers[node].is_none(), "broker {node} runs");
        let mut listener = None;
        for _ in 0..100 {
            match std::net::TcpListener::bind(self.internal[node]) {
                Ok(bound) => {
                    listener = Some(bound);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        let listener = listener.expect("the internal port is free again");
        let broker = self.launch(node, listener).await;
        self.brokers[node] = Some(broker);
        self.await_leaders().await;
    }

    pub fn broker(&self, node: usize) -> &Broker {
        self.brokers[node].as_ref().expect("broker runs")
    }

    pub fn running(&self) -> Vec<usize> {
        (0..self.shape.brokers as usize)
            .filter(|n| self.brokers[*n].is_some())
            .collect()
    }

    pub async fn client(&self, node: usize) -> GatewayClient<Channel> {
        GatewayClient::connect(format!("http://{}", self.broker(node).grpc))
            .await
            .expect("gateway connects")
    }

    /// The broker whose replica of `partition` leads it now.
    pub fn leader_of(&self, partition: u16) -> Option<usize> {
        self.running().into_iter().find(|node| {
            self.broker(*node)
                .local
                .partition(partition)
                .is_some_and(|h| h.role().role == beeline_stream::Role::Leader)
        })
    }

    /// Waits until every partition has a leader among the running brokers and every running
    /// broker's topology names it, in its term.
    pub async fn await_leaders(&self) {
        for _ in 0..600 {
            let complete = (1..=self.shape.partitions).all(|partition| {
                let Some(leader) = self.leader_of(partition) else {
                    return false;
                };
                let term = self
                    .broker(leader)
                    .local
                    .partition(partition)
                    .map(|h| h.role().term);
                self.running().iter().all(|node| {
                    self.broker(*node)
                        .membership
                        .leader(u32::from(partition))
                        .is_some_and(|l| {
                            l.node == leader as u64
                                && Some(l.term) == term
                                && l.health == Health::Healthy
                        })
                })
            });
            if complete {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the partitions did not elect leaders the topology knows of");
    }

    /// A running broker that leads no partition (each client below talks to it alone), or
    /// else the one leading the fewest.
    pub fn follower_broker(&self) -> usize {
        let led = |node: usize| {
            (1..=self.shape.partitions)
                .filter(|p| self.leader_of(*p) == Some(node))
                .count()
        };
        self.running()
            .into_iter()
            .min_by_key(|node| led(*node))
            .expect("a running broker")
    }

    /// Stops broker `node` as a dead process would leave the others: its replicas leave their
    /// groups without handing leadership over, its servers close their connections, and
    /// whatever else it runs (its gateway's job streams, their calls to other brokers) ends
    /// with its runtime.
    pub async fn stop(&mut self, node: usize) {
        drop(self.halt(node).await);
    }

    /// Shuts broker `node` down as `beeline broker` does when asked to stop: its gateway
    /// first, then each of its replicas cleanly, then the rest.
    pub async fn shut_down(&mut self, node: usize) {
        let broker = self.brokers[node].as_mut().expect("broker runs");
        let _ = broker.stop_gateway.take().map(|stop| stop.send(()));
        for handle in &broker.partitions {
            handle.shutdown().await;
        }
        self.stop(node).await;
    }

    /// Stops broker `node` as [`stop`](Self::stop) does, but the connections other brokers
    /// opened to it stay open with nothing coming, as a broker cut off by the network leaves
    /// them: their calls hang until the callers end them.
    pub async fn stop_hanging(&mut self, node: usize) {
        let broker = self.halt(node).await;
        self.hanging.push(broker);
    }

    /// Broker `node`, its gateway and servers stopped and its replicas halted; its runtime
    /// still runs what its servers' connections hold (`tonic` serves each on a task of its own).
    async fn halt(&mut self, node: usize) -> Broker {
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
        broker
    }

    /// The committed records of `partition`, read on its leader.
    pub async fn records(&self, partition: u16) -> Vec<beeline_protocol::Record> {
        let Some(node) = self.leader_of(partition) else {
            return Vec::new();
        };
        let Some(handle) = self.broker(node).local.partition(partition) else {
            return Vec::new();
        };
        if handle.sync().await.is_err() {
            return Vec::new();
        }
        self.records_on(node, partition).await
    }

    /// The records the replica of `partition` on `node` holds committed (a follower's too).
    pub async fn records_on(&self, node: usize, partition: u16) -> Vec<beeline_protocol::Record> {
        let Some(handle) = self.broker(node).local.partition(partition) else {
            return Vec::new();
        };
        let Ok(mut reader) = handle.reader().await else {
            return Vec::new();
        };
        let mut records = Vec::new();
        while let Ok(Some(record)) = reader.next_record() {
            records.push(record);
        }
        records
    }

    pub async fn await_records(
        &self,
        partition: u16,
        what: &str,
        check: impl Fn(&[beeline_protocol::Record]) -> bool,
    ) {
        for _ in 0..400 {
            if check(&self.records(partition).await) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
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
        // Each broker's runtime goes down with it (see `Broker`'s drop).
    }
}

/// One broker: the internal API first (its groups answer as they open), the membership, every
/// replica this broker holds (placed round-robin), then the gateway.
async fn start_broker(
    settings: ClusterSettings,
    listener: std::net::TcpListener,
    dir: std::path::PathBuf,
    config: GatewayConfig,
) -> Broker {
    let node = settings.node_id;
    listener.set_nonblocking(true).expect("non-blocking");
    let listener = tokio::net::TcpListener::from_std(listener).expect("internal port");
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
    let groups = Groups::of_node(node);
    let services = Arc::new(BrokerServices {
        membership: membership.clone(),
        router: router.clone(),
        job_streams: job_streams.clone(),
        executor: std::sync::OnceLock::new(),
    });
    let service = InternalServer::broker(groups.clone(), services.clone());
    let (stop_internal, internal_stopped) = oneshot::channel::<()>();
    let peers = membership.peers().clone();
    let internal_server = tokio::spawn(async move {
        let _ = beeline_cluster::transport::serve(listener, service, peers, async {
            let _ = internal_stopped.await;
        })
        .await;
    });
    let mut tasks = vec![tokio::spawn(membership.clone().run())];
    let mine = settings.local_partitions();
    let placement = settings.placement();
    let mut slots = Vec::new();
    let mut partitions = Vec::new();
    let mut raft_logs = HashMap::new();
    let partition_count = settings.partitions as u16;
    let flusher = NodeFlusher::start().expect("the broker's flusher");
    for id in 1..=partition_count {
        if !mine.contains(&u32::from(id)) {
            slots.push(PartitionSlot::Elsewhere);
            continue;
        }
        let members = placement[usize::from(id) - 1]
            .replicas
            .iter()
            .map(|r| r.node)
            .collect();
        let partition_dir = dir.join(format!("partition-{id}"));
        let snapshots =
            SnapshotStore::open(partition_dir.join("snapshots"), 2).expect("snapshot store");
        let log = RaftLog::open(
            RaftLogConfig {
                node_id: node,
                partition_id: u32::from(id),
                journal: FileJournalConfig::default(),
                timing: TIMING,
                members,
                snapshots: snapshots.clone(),
                kept_after_snapshot: RaftLogConfig::KEPT_AFTER_SNAPSHOT,
                guard_rejoin: true,
                flusher: flusher.clone(),
                recent_entries: RaftLogConfig::RECENT_ENTRIES,
                election_band: placement[usize::from(id) - 1].election_band(node),
                ahead: placement[usize::from(id) - 1].ahead_of(node),
            },
            &partition_dir,
            membership.peers().clone(),
            &groups,
        )
        .await
        .expect("the Raft group opens");
        raft_logs.insert(id, log.clone());
        let mut config = PartitionConfig::new(id);
        config.partition_count = partition_count;
        config.snapshot_period = None;
        config.job_streams = Some(job_streams.clone());
        let opener: Arc<dyn StoreOpener + Send + Sync> = Arc::new(
            |_: Option<&std::path::Path>| -> beeline_state::Result<Arc<dyn Store>> {
                Ok(Arc::new(MemStore::new()))
            },
        );
        let router: Arc<dyn CommandRouter> = router.clone();
        let handle = tokio::task::spawn_blocking(move || {
            Partition::open_replica(
                config,
                log,
                snapshots,
                opener,
                Arc::new(SystemClock),
                Some(router),
            )
        })
        .await
        .expect("opening task")
        .expect("the replica opens");
        local.set_partition(handle.clone());
        slots.push(PartitionSlot::Open(handle.clone()));
        partitions.push(handle);
    }
    tasks.push(tokio::spawn(publish(
        membership.clone(),
        partitions.clone(),
    )));
    let node_info = NodeInfo {
        node_id: node as i32,
        host: "127.0.0.1".into(),
        port: grpc.port(),
        version: "test".into(),
    };
    let gateway = Gateway::new(
        Cluster::single_node(node_info, slots)
            .with_job_streams(job_streams.clone())
            .with_membership(membership.clone()),
        config,
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
        job_streams,
        partitions,
        groups: raft_logs,
        raft_groups: groups,
        tasks,
        stop_gateway: Some(stop_gateway),
        stop_internal: Some(stop_internal),
        internal_server: Some(internal_server),
        runtime: None,
    }
}

pub(super) fn gateway_config() -> GatewayConfig {
    GatewayConfig {
        request_timeout: Duration::from_secs(15),
        job_probe_interval: Duration::from_secs(30),
        ..GatewayConfig::default()
    }
}

pub(super) fn completed(records: &[beeline_protocol::Record], instance: i64) -> bool {
    records.iter().any(|r| {
        r.key == instance
            && r.intent == beeline_protocol::intent::ProcessInstanceIntent::ElementCompleted.into()
    })
}

/// Creates instances through `client` until one lands on `partition` (NOT_FOUND while the
/// deployment is on its way there).
async fn create_on(
    client: &mut GatewayClient<Channel>,
    partition: u16,
    partitions: u16,
    variables: impl Fn(usize) -> String,
) -> (i64, usize) {
    for attempt in 0..300 {
        match client
            .create_process_instance(create("order", &variables(attempt)))
            .await
        {
            Ok(created) => {
                let key = created.into_inner().process_instance_key;
                assert!(key::partition_of(key).is_some_and(|p| p <= partitions));
                if key::partition_of(key) == Some(partition) {
                    return (key, attempt);
                }
            }
            Err(status) if status.code() == tonic::Code::NotFound => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(status) => panic!("creation failed: {status:?}"),
        }
    }
    panic!("no instance landed on partition {partition}");
}

/// Activates `job_type` jobs through `client` until `want` are in hand.
async fn activate(
    client: &mut GatewayClient<Channel>,
    job_type: &str,
    want: usize,
) -> Vec<ActivatedJob> {
    let mut jobs = Vec::new();
    for _ in 0..100 {
        let mut stream = client
            .activate_jobs(ActivateJobsRequest {
                r#type: job_type.into(),
                worker: "w".into(),
                timeout: 60_000,
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
        if jobs.len() >= want {
            break;
        }
    }
    jobs
}

async fn deploy_order(client: &mut GatewayClient<Channel>) {
    client
        .deploy_resource(DeployResourceRequest {
            resources: vec![resource("order.bpmn", &order_process())],
            tenant_id: String::new(),
        })
        .await
        .expect("deployed");
}

fn order_process() -> String {
    ProcessBuilder::new("order")
        .message("paid", Some("=orderId"))
        .start_event("start")
        .service_task("pack", "pack")
        .receive_task("await-payment", "paid")
        .service_task("ship", "ship")
        .end_event("end")
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_a_follower_broker_works_every_partition_through_a_leader_failover() {
    let mut cluster = TestCluster::start(THREE, gateway_config()).await;
    let through = cluster.follower_broker();
    let mut client = cluster.client(through).await;

    // Every broker's topology: one leader and two followers per partition, all healthy.
    let topology = client
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
        (3, 3, 3)
    );
    assert_eq!(topology.brokers.len(), 3);
    let mut roles: HashMap<i32, Vec<i32>> = HashMap::new();
    for broker in &topology.brokers {
        assert_eq!(
            broker.partitions.len(),
            3,
            "broker {} holds all",
            broker.node_id
        );
        for p in &broker.partitions {
            assert_eq!(p.health, PartitionBrokerHealth::Healthy as i32);
            roles.entry(p.partition_id).or_default().push(p.role);
        }
    }
    for (partition, mut roles) in roles {
        roles.sort_unstable();
        let mut want = vec![
            PartitionBrokerRole::Leader as i32,
            PartitionBrokerRole::Follower as i32,
            PartitionBrokerRole::Follower as i32,
        ];
        want.sort_unstable();
        assert_eq!(roles, want, "partition {partition}");
    }
    // Priority election: with every broker up, each partition is led by its primary (partition
    // p by broker p - 1), so each broker leads one.
    for broker in &topology.brokers {
        let led: Vec<i32> = broker
            .partitions
            .iter()
            .filter(|p| p.role == PartitionBrokerRole::Leader as i32)
            .map(|p| p.partition_id)
            .collect();
        assert_eq!(
            led,
            vec![broker.node_id + 1],
            "broker {} leads the partition it is primary of",
            broker.node_id
        );
    }

    // Deployed through a broker that does not lead partition 1 (forwarded to its leader),
    // distributed by partition 1 to the others.
    deploy_order(&mut client).await;
    let mut instances = Vec::new();
    for partition in 1..=THREE.partitions {
        let order = |attempt| format!("order-{partition}-{attempt}");
        let (key, attempt) = create_on(&mut client, partition, THREE.partitions, |attempt| {
            format!(r#"{{"orderId": "{}"}}"#, order(attempt))
        })
        .await;
        instances.push((partition, order(attempt), key));
    }
    // Instances that landed on another partition on the way (`create_on` tries until one
    // lands on its own) have pack jobs too: activate until each of ours is in hand.
    let ours: Vec<i64> = instances.iter().map(|(_, _, key)| *key).collect();
    let mut packed = Vec::new();
    for _ in 0..100 {
        packed.extend(activate(&mut client, "pack", 1).await);
        if ours
            .iter()
            .all(|key| packed.iter().any(|job| job.process_instance_key == *key))
        {
            break;
        }
    }
    let mut partitions: Vec<u16> = packed
        .iter()
        .filter(|job| ours.contains(&job.process_instance_key))
        .filter_map(|job| key::partition_of(job.key))
        .collect();
    partitions.sort_unstable();
    assert_eq!(partitions, vec![1, 2, 3], "a pack job from every partition");
    for job in &packed {
        client
            .complete_job(CompleteJobRequest {
                job_key: job.key,
                variables: String::new(),
                result: None,
            })
            .await
            .expect("pack completed");
    }
    // Each payment to the partition of its correlation key, correlated to its instance on
    // another partition (led by any broker).
    let mut across = 0;
    for (partition, order, _) in &instances {
        across += usize::from(message_partition(order, THREE.partitions) != *partition);
        client
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
    assert!(across > 0, "at least one message on another partition");
    let shipped = activate(&mut client, "ship", instances.len()).await;
    assert_eq!(shipped.len(), instances.len(), "every payment correlated");

    // The leader of the partition of one ship job stops; the job is completed through the
    // same broker all the same: the gateway retries until the new leader is known.
    let job = shipped
        .iter()
        .find(|job| {
            cluster.leader_of(key::partition_of(job.key).expect("partition")) != Some(through)
        })
        .expect("a job on a partition led by another broker");
    let partition = key::partition_of(job.key).expect("partition");
    let stopped = cluster.leader_of(partition).expect("a leader");
    eprintln!("stopping broker {stopped}, the leader of partition {partition}");
    cluster.stop(stopped).await;
    let started = std::time::Instant::now();
    for job in &shipped {
        client
            .complete_job(CompleteJobRequest {
                job_key: job.key,
                variables: String::new(),
                result: None,
            })
            .await
            .expect("ship completed after the failover");
    }
    eprintln!(
        "completed through the failover in {} ms",
        started.elapsed().as_millis()
    );
    cluster.await_leaders().await;
    assert_ne!(cluster.leader_of(partition), Some(stopped));
    for (partition, _, key) in &instances {
        cluster
            .await_records(*partition, "the instance completes", |records| {
                completed(records, *key)
            })
            .await;
    }
    // New instances on every partition, from the two brokers left.
    for partition in 1..=THREE.partitions {
        create_on(&mut client, partition, THREE.partitions, |attempt| {
            format!(r#"{{"orderId": "after-{attempt}"}}"#)
        })
        .await;
    }
    // A completed instance is gone: cancelling it is the partition leader's rejection,
    // NOT_FOUND, wherever that leader is.
    for (_, _, key) in &instances {
        let status = client
            .cancel_process_instance(CancelProcessInstanceRequest {
                process_instance_key: *key,
                operation_reference: None,
            })
            .await
            .expect_err("gone");
        assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    }
}

fn as_user<T>(user: &str, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let encoded = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        format!("{user}:pw"),
    );
    request.metadata_mut().insert(
        "authorization",
        format!("Basic {encoded}").parse().expect("metadata"),
    );
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_command_keeps_the_callers_tenants() {
    let users = ["alice", "bob"]
        .iter()
        .map(|u| (u.to_string(), "pw".to_string()))
        .collect();
    let config = GatewayConfig {
        auth: AuthConfig::Basic(users),
        tenancy: TenancyConfig {
            enabled: true,
            assignments: TenancyConfig::parse_assignments("alice=tenant-a,bob=tenant-b")
                .expect("assignments"),
        },
        ..gateway_config()
    };
    let cluster = TestCluster::start(THREE, config).await;
    // Through a broker that does not lead partition 1.
    let through = (0..THREE.brokers as usize)
        .find(|node| cluster.leader_of(1) != Some(*node))
        .expect("a follower of partition 1");
    let mut client = cluster.client(through).await;
    client
        .deploy_resource(as_user(
            "alice",
            DeployResourceRequest {
                resources: vec![resource("order.bpmn", &order_process())],
                tenant_id: "tenant-a".into(),
            },
        ))
        .await
        .expect("deployed for tenant A");
    let mut request = create("order", r#"{"orderId": "a-1"}"#);
    request.tenant_id = "tenant-a".into();
    let mut instance = None;
    for _ in 0..300 {
        match client
            .create_process_instance(as_user("alice", request.clone()))
            .await
        {
            Ok(created) => {
                let key = created.into_inner().process_instance_key;
                let partition = key::partition_of(key).expect("partition");
                // Wanted: an instance on a partition led by another broker.
                if cluster.leader_of(partition) != Some(through) {
                    instance = Some(key);
                    break;
                }
            }
            Err(status) if status.code() == tonic::Code::NotFound => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(status) => panic!("creation failed: {status:?}"),
        }
    }
    let instance = instance.expect("an instance on a partition led elsewhere");
    let cancel = CancelProcessInstanceRequest {
        process_instance_key: instance,
        operation_reference: None,
    };
    let refused = client
        .cancel_process_instance(as_user("bob", cancel))
        .await
        .expect_err("another tenant's instance");
    assert_eq!(refused.code(), tonic::Code::NotFound, "{refused:?}");
    client
        .cancel_process_instance(as_user("alice", cancel))
        .await
        .expect("its own tenant's instance is cancelled");
}

/// Partition p of three brokers is led by its primary, broker p - 1.
#[track_caller]
fn assert_primaries_lead(cluster: &TestCluster) {
    for partition in 1..=THREE.partitions {
        assert_eq!(
            cluster.leader_of(partition),
            Some(usize::from(partition) - 1),
            "partition {partition}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebalancing_hands_each_partition_back_to_its_primary() {
    let mut cluster = TestCluster::start(THREE, gateway_config()).await;
    // Priority election: partition p is led by its primary, broker p - 1.
    assert_primaries_lead(&cluster);
    // Broker 0 goes: partition 1 fails over, and stays where it went when broker 0 is back.
    cluster.stop(0).await;
    cluster.await_leaders().await;
    let failover = cluster.leader_of(1).expect("partition 1 has a leader");
    assert_ne!(failover, 0);
    cluster.restart(0).await;
    assert_eq!(
        cluster.leader_of(1),
        Some(failover),
        "leadership does not move back by itself"
    );
    // Asked of a broker (not necessarily partition 1's leader: each broker hands over what
    // it leads), rebalancing gives partition 1 back to broker 0.
    let asked = cluster.broker(2);
    beeline_cluster::rebalance::rebalance(&asked.raft_groups, &asked.membership).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while cluster.leader_of(1) != Some(0) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "partition 1 is led by {:?}, not its primary",
            cluster.leader_of(1)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cluster.await_leaders().await;
    assert_primaries_lead(&cluster);
    // The partition handed over takes commands on its new leader, through any broker.
    let mut client = cluster.client(2).await;
    deploy_order(&mut client).await;
    create_on(&mut client, 1, THREE.partitions, |attempt| {
        format!(r#"{{"orderId": "rebalanced-{attempt}"}}"#)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_clusters_primary_that_starts_last_leads_its_partition() {
    // Five replicas: the four others settle without the primary (three answers are a
    // majority of the others) and wait for it to vote before they stand.
    let shape = Shape {
        brokers: 5,
        partitions: 1,
        factor: 5,
    };
    let mut cluster = TestCluster::start_without(shape, gateway_config(), Some(0)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        cluster.leader_of(1),
        None,
        "nobody stands before the primary"
    );
    cluster.restart(0).await;
    assert_eq!(
        cluster.leader_of(1),
        Some(0),
        "the primary, started last, leads"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_brokers_hold_three_replicas_of_each_partition_placed_round_robin() {
    let shape = Shape {
        brokers: 5,
        partitions: 5,
        factor: 3,
    };
    let cluster = TestCluster::start(shape, gateway_config()).await;
    // Each broker opened its replicas only: partition p on brokers p - 1, p, p + 1 (mod 5).
    for node in 0..5usize {
        let mut held: Vec<u16> = cluster
            .broker(node)
            .partitions
            .iter()
            .map(|h| h.partition_id())
            .collect();
        held.sort_unstable();
        let mut want: Vec<u16> = (1..=5u16)
            .filter(|p| (0..3).any(|j| (usize::from(*p) - 1 + j) % 5 == node))
            .collect();
        want.sort_unstable();
        assert_eq!(held, want, "broker {node}");
    }
    // The topology, through any broker: each partition's replicas where placed, one leading.
    let topology = cluster
        .client(4)
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
        (5, 5, 3)
    );
    for partition in 1..=5i32 {
        let mut replicas: Vec<(i32, i32)> = topology
            .brokers
            .iter()
            .flat_map(|b| {
                b.partitions
                    .iter()
                    .filter(|p| p.partition_id == partition)
                    .map(|p| (b.node_id, p.role))
            })
            .collect();
        replicas.sort_unstable();
        let nodes: Vec<i32> = replicas.iter().map(|r| r.0).collect();
        let mut want: Vec<i32> = (0..3).map(|j| (partition - 1 + j) % 5).collect();
        want.sort_unstable();
        assert_eq!(nodes, want, "partition {partition}'s replicas");
        let leaders = replicas
            .iter()
            .filter(|r| r.1 == PartitionBrokerRole::Leader as i32)
            .count();
        assert_eq!(leaders, 1, "partition {partition} has one leader");
    }
    // Instances on every partition through one broker, which holds three of the five.
    let mut client = cluster.client(0).await;
    deploy_order(&mut client).await;
    for partition in 1..=shape.partitions {
        create_on(&mut client, partition, shape.partitions, |attempt| {
            format!(r#"{{"orderId": "five-{attempt}"}}"#)
        })
        .await;
    }
}

/// Every broker but `through` stops, as dead processes would; a moment later the surviving
/// broker's connections to them are closed (so that what follows is not sent on a connection
/// about to break).
async fn stop_all_but(cluster: &mut TestCluster, through: usize) {
    for node in cluster.running() {
        if node != through {
            cluster.stop(node).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// A broker cut off from the others (here: they died) answers every command at once as
/// certainly not written (UNAVAILABLE, which Zeebe's clients retry on another broker), not at
/// the request's time-out: for a partition it led, its replica can no longer commit (it hears
/// from no other replica), so it takes nothing new; for the others, no leader can be found or
/// reached from here however long it looks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_cut_off_from_the_other_replicas_answers_unavailable_at_once() {
    let timeout = Duration::from_secs(10);
    let mut cluster = TestCluster::start(
        THREE,
        GatewayConfig {
            request_timeout: timeout,
            ..gateway_config()
        },
    )
    .await;
    let through = cluster.leader_of(1).expect("partition 1 has a leader");
    stop_all_but(&mut cluster, through).await;

    let mut client = cluster.client(through).await;
    for partition in 1..=THREE.partitions {
        let correlation_key = (0..)
            .map(|i| format!("order-{i}"))
            .find(|key| message_partition(key, THREE.partitions) == partition)
            .expect("a key of the partition");
        let started = std::time::Instant::now();
        let status = client
            .publish_message(PublishMessageRequest {
                name: "paid".into(),
                correlation_key,
                time_to_live: 60_000,
                message_id: String::new(),
                variables: "{}".into(),
                tenant_id: String::new(),
            })
            .await
            .expect_err("no leader within reach");
        let took = started.elapsed();
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
        assert!(
            status.message().contains(&format!("partition {partition}")),
            "{status:?}"
        );
        assert!(
            took < Duration::from_secs(1),
            "partition {partition}: answered in {took:?}, not at the request's time-out"
        );
    }
}

/// A command its leader took and then could not answer (the leader's broker died, or its
/// replica stopped leading) may have been written: it ends as DEADLINE_EXCEEDED, never
/// UNAVAILABLE, and an awaited result (CreateProcessInstanceWithResult, waiting on a job
/// nobody works) ends at once rather than at its 30 s wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_awaited_result_whose_leader_goes_ends_deadline_exceeded_at_once() {
    let mut cluster = TestCluster::start(THREE, gateway_config()).await;
    let through = cluster.follower_broker();
    let mut client = cluster.client(through).await;
    deploy_order(&mut client).await;
    // The deployment has reached every partition once an instance starts on each.
    for partition in 1..=THREE.partitions {
        create_on(&mut client, partition, THREE.partitions, |attempt| {
            format!(r#"{{"orderId": "before-{attempt}"}}"#)
        })
        .await;
    }
    let mut awaiting = client.clone();
    let waiting = tokio::spawn(async move {
        awaiting
            .create_process_instance_with_result(CreateProcessInstanceWithResultRequest {
                request: Some(create("order", r#"{"orderId": "awaited"}"#)),
                request_timeout: 30_000,
                fetch_variables: Vec::new(),
            })
            .await
    });
    // The instance is created and waits at its first job.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!waiting.is_finished(), "the result is awaited");

    // Wherever the instance is, its leader goes: the other brokers die, and the replicas
    // here stop.
    let gone = std::time::Instant::now();
    stop_all_but(&mut cluster, through).await;
    for handle in &cluster.broker(through).partitions {
        handle.halt().await;
    }
    let status = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the awaited result ends, not at its 30 s wait")
        .expect("the request's task")
        .expect_err("no result");
    let took = gone.elapsed();
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    eprintln!(
        "the awaited result ended {} ms after its leader went: {status:?}",
        took.as_millis()
    );
}

/// A broker that is down is tried again at openraft's backoff, not at once over and over: the
/// leaders' replication calls to it that fail (a refused connection fails before the call asks
/// for its first request, where openraft waits out its backoff) stay a few a second per
/// partition, where a retry at once would make thousands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replication_to_a_dead_broker_is_retried_at_a_pace() {
    let mut cluster = TestCluster::start(THREE, gateway_config()).await;
    cluster.await_leaders().await;
    let dead = cluster.follower_broker();
    cluster.stop(dead).await;
    cluster.await_leaders().await;
    let failed = |cluster: &TestCluster| -> u64 {
        cluster
            .running()
            .into_iter()
            .flat_map(|node| cluster.broker(node).groups.values())
            .map(|group| {
                group
                    .metrics()
                    .appends_failed
                    .load(std::sync::atomic::Ordering::Relaxed)
            })
            .sum()
    };
    let started = std::time::Instant::now();
    let before = failed(&cluster);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = failed(&cluster) - before;
    let window = started.elapsed();
    assert!(
        during > 0,
        "the leaders kept trying broker {dead} (no failed call in {window:?})"
    );
    // At most a heartbeat every 100 ms and a replication retry every 200 ms per partition
    // (15 a second), with room to spare twice over; a retry at once makes thousands.
    let most = (f64::from(THREE.partitions) * 15.0 * window.as_secs_f64() * 2.0).ceil() as u64;
    assert!(
        during <= most,
        "{during} failed replication calls to broker {dead} in {window:?} (at most {most})"
    );
}
