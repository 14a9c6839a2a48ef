//! The gateway end to end: real partitions (stream processor and engine over in-memory logs and
//! stores), the gateway served on an ephemeral port, and the generated tonic client — plus a raw
//! HTTP/2 client for what no well-behaved client sends.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use beeline_engine::Engine;
use beeline_gateway::proto::gateway_client::GatewayClient;
use beeline_gateway::proto::partition::{PartitionBrokerHealth, PartitionBrokerRole};
use beeline_gateway::proto::*;
use beeline_gateway::routing::message_partition;
use beeline_gateway::{
    Cluster, Gateway, GatewayConfig, GatewayMetrics, NodeInfo, PartitionSlot, ServeError,
};
use beeline_log::MemJournal;
use beeline_protocol::Intent;
use beeline_protocol::intent::{
    IncidentIntent, JobIntent, ProcessInstanceCreationIntent, ProcessInstanceIntent,
    VariableDocumentIntent,
};
use beeline_protocol::key;
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
use beeline_stream::testkit::bpmn::ProcessBuilder;
use beeline_stream::{
    FlushPolicy, JobStreams, LocalRouter, Partition, PartitionConfig, PartitionHandle,
    PartitionMetrics, SystemClock,
};
use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::Code;
use tonic::transport::Channel;

#[path = "gateway/auth.rs"]
mod auth;
#[path = "gateway/cluster.rs"]
mod cluster;
#[path = "gateway/fuzz.rs"]
mod fuzz;
#[path = "gateway/replicated.rs"]
mod replicated;
#[path = "gateway/replicated_jobs.rs"]
mod replicated_jobs;
#[path = "gateway/rest.rs"]
mod rest;
#[path = "gateway/tenants.rs"]
mod tenants;
#[path = "gateway/tls.rs"]
mod tls;

struct Node {
    address: SocketAddr,
    /// The REST API's address.
    rest: SocketAddr,
    client: GatewayClient<Channel>,
    partitions: Vec<PartitionHandle>,
    metrics: GatewayMetrics,
    stop: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<Result<(), ServeError>>>,
    _dir: tempfile::TempDir,
}

impl Node {
    async fn start(partitions: u16) -> Self {
        Self::start_with(partitions, GatewayConfig::default(), |_| {}).await
    }

    async fn start_with(
        partitions: u16,
        config: GatewayConfig,
        configure: impl Fn(&mut PartitionConfig),
    ) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let router = LocalRouter::new();
        // Wired as the node wires them: partitions push new jobs to the gateway's streams.
        let job_streams = JobStreams::new();
        let mut slots = Vec::new();
        for id in 1..=partitions {
            let handle = open_partition(dir.path(), id, partitions, &router, &|config| {
                config.job_streams = Some(job_streams.clone());
                configure(config);
            });
            router.set_partition(handle.clone());
            slots.push(PartitionSlot::Open(handle));
        }
        Self::serve(slots, config, Some(job_streams), dir).await
    }

    async fn serve(
        slots: Vec<PartitionSlot>,
        config: GatewayConfig,
        job_streams: Option<Arc<JobStreams>>,
        dir: tempfile::TempDir,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral port");
        let address = listener.local_addr().expect("local address");
        let rest_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral port");
        let rest = rest_listener.local_addr().expect("local address");
        let partitions = slots
            .iter()
            .filter_map(|slot| slot.handle().cloned())
            .collect();
        let node = NodeInfo {
            node_id: 0,
            host: "127.0.0.1".into(),
            port: address.port(),
            version: "0.1.0-test".into(),
        };
        let mut cluster = Cluster::single_node(node, slots);
        if let Some(streams) = job_streams {
            cluster = cluster.with_job_streams(streams);
        }
        let gateway = Gateway::new(cluster, config);
        let metrics = gateway.metrics();
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            gateway
                .serve(listener, Some(rest_listener), async {
                    let _ = stopped.await;
                })
                .await
        });
        // Connects at its first call: a node serving TLS has no plaintext client.
        let client = GatewayClient::new(
            Channel::from_shared(format!("http://{address}"))
                .expect("an address")
                .connect_lazy(),
        );
        Self {
            address,
            rest,
            client,
            partitions,
            metrics,
            stop: Some(stop),
            server: Some(server),
            _dir: dir,
        }
    }

    fn client(&self) -> GatewayClient<Channel> {
        self.client.clone()
    }

    /// The node still answers: Topology, and a message publish.
    async fn assert_serving(&self) {
        let topology = self.client().topology(TopologyRequest {}).await;
        assert!(topology.is_ok(), "topology after abuse: {topology:?}");
        let published = self
            .client()
            .publish_message(message("still-alive", "k", ""))
            .await;
        assert!(published.is_ok(), "publish after abuse: {published:?}");
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn open_partition(
    dir: &Path,
    id: u16,
    partitions: u16,
    router: &Arc<LocalRouter>,
    configure: &impl Fn(&mut PartitionConfig),
) -> PartitionHandle {
    let mut config = PartitionConfig::new(id);
    config.partition_count = partitions;
    config.snapshot_period = None;
    configure(&mut config);
    let snapshots =
        SnapshotStore::open(dir.join(format!("partition-{id}")), 2).expect("snapshot store");
    let opener = |_: Option<&Path>| -> beeline_state::Result<Arc<dyn Store>> {
        Ok(Arc::new(MemStore::new()))
    };
    Partition::open(
        config,
        MemJournal::new(),
        snapshots,
        &opener,
        Arc::new(SystemClock),
        Some(router.clone()),
    )
    .expect("partition opens")
}

fn message(name: &str, correlation_key: &str, id: &str) -> PublishMessageRequest {
    PublishMessageRequest {
        name: name.into(),
        correlation_key: correlation_key.into(),
        time_to_live: 60_000,
        message_id: id.into(),
        variables: r#"{"amount":5}"#.into(),
        tenant_id: String::new(),
    }
}

fn supported(intent: impl Into<Intent>) -> bool {
    Engine::supported_commands().contains(&intent.into())
}

#[tokio::test]
async fn topology_lists_every_partition_led_and_healthy() {
    let node = Node::start(3).await;
    let topology = node
        .client()
        .topology(TopologyRequest {})
        .await
        .expect("topology")
        .into_inner();
    assert_eq!(topology.cluster_size, 1);
    assert_eq!(topology.partitions_count, 3);
    assert_eq!(topology.replication_factor, 1);
    assert_eq!(topology.gateway_version, "0.1.0-test");
    assert_eq!(topology.brokers.len(), 1);
    let broker = &topology.brokers[0];
    assert_eq!(broker.node_id, 0);
    assert_eq!(broker.host, "127.0.0.1");
    assert_eq!(broker.port, i32::from(node.address.port()));
    assert_eq!(broker.version, "0.1.0-test");
    let ids: Vec<i32> = broker.partitions.iter().map(|p| p.partition_id).collect();
    assert_eq!(ids, vec![1, 2, 3]);
    for partition in &broker.partitions {
        assert_eq!(partition.role(), PartitionBrokerRole::Leader);
        assert_eq!(partition.health(), PartitionBrokerHealth::Healthy);
    }
}

#[tokio::test]
async fn calls_and_backpressure_show_in_the_metrics() {
    let node = Node::start(2).await;
    node.client()
        .topology(TopologyRequest {})
        .await
        .expect("topology");
    let missing = node
        .client()
        .cancel_process_instance(CancelProcessInstanceRequest {
            process_instance_key: key::encode(2, 1),
            operation_reference: None,
        })
        .await;
    assert_eq!(missing.unwrap_err().code(), Code::NotFound);
    let mut out = String::new();
    node.metrics.render(&mut out);
    for line in [
        "beeline_gateway_requests_total{api=\"grpc\",rpc=\"Topology\",code=\"OK\"} 1",
        "beeline_gateway_requests_total{api=\"grpc\",rpc=\"CancelProcessInstance\",code=\"NOT_FOUND\"} 1",
        "beeline_gateway_request_duration_seconds_count{api=\"grpc\",rpc=\"Topology\"} 1",
        "beeline_backpressure_inflight{partition=\"2\"} 0",
        "beeline_backpressure_limit{partition=\"1\"} 100",
        "beeline_backpressure_dropped_total{partition=\"1\"} 0",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line} in:\n{out}");
    }
}

#[tokio::test]
async fn messages_are_published_on_the_partition_of_their_correlation_key() {
    let node = Node::start(3).await;
    let mut partitions_seen = HashSet::new();
    for correlation_key in ["order-1", "order-2", "order-3", "a", "b", "c", "foobar"] {
        let response = node
            .client()
            .publish_message(message("paid", correlation_key, ""))
            .await
            .expect("published")
            .into_inner();
        assert_eq!(response.tenant_id, "<default>");
        let partition = key::partition_of(response.key).expect("a key with a partition");
        assert_eq!(
            partition,
            message_partition(correlation_key, 3),
            "{correlation_key}"
        );
        partitions_seen.insert(partition);
    }
    assert!(partitions_seen.len() > 1, "the keys spread over partitions");
}

#[tokio::test]
async fn a_duplicate_message_id_is_already_exists() {
    let node = Node::start(1).await;
    node.client()
        .publish_message(message("paid", "order-1", "m-1"))
        .await
        .expect("first publish");
    let status = node
        .client()
        .publish_message(message("paid", "order-1", "m-1"))
        .await
        .expect_err("the second is refused");
    assert_eq!(status.code(), Code::AlreadyExists, "{status:?}");
    assert_eq!(
        status.message(),
        "Command 'PUBLISH' rejected with code 'ALREADY_EXISTS': Expected to publish a new \
         message with id 'm-1', but a message with that id was already published"
    );
    // Another correlation key may reuse the id.
    node.client()
        .publish_message(message("paid", "order-2", "m-1"))
        .await
        .expect("same id, other key");
}

#[tokio::test]
async fn invalid_messages_are_invalid_argument_naming_the_field() {
    let node = Node::start(1).await;
    let mut bad_variables = message("paid", "order-1", "");
    bad_variables.variables = "[1, 2]".into();
    let status = node
        .client()
        .publish_message(bad_variables)
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(
        status.message(),
        "Property 'variables' is invalid: Expected document to be a root level object, but was 'ARRAY'"
    );

    let mut not_json = message("paid", "order-1", "");
    not_json.variables = "{amount: 5}".into();
    let status = node.client().publish_message(not_json).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("'variables'"), "{status:?}");

    let status = node
        .client()
        .publish_message(message("", "order-1", ""))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(status.message(), "No name provided");

    let mut tenant = message("paid", "order-1", "");
    tenant.tenant_id = "acme".into();
    let status = node.client().publish_message(tenant).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("multi-tenancy is disabled"),
        "{status:?}"
    );
}

#[tokio::test]
async fn rpcs_without_an_engine_processor_are_unimplemented_naming_what_is_missing() {
    let node = Node::start(1).await;
    // No record value for migration yet: the request is checked, then refused.
    let status = node
        .client()
        .migrate_process_instance(MigrateProcessInstanceRequest {
            process_instance_key: key::encode(1, 1),
            migration_plan: Some(migrate_process_instance_request::MigrationPlan {
                target_process_definition_key: key::encode(1, 2),
                mapping_instructions: Vec::new(),
            }),
            operation_reference: None,
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unimplemented);
    assert!(
        status
            .message()
            .starts_with("Beeline does not support migrating process instances yet"),
        "{status:?}"
    );
}

#[tokio::test]
async fn resources_are_deleted_and_a_process_with_running_instances_is_not() {
    let node = Node::start(1).await;
    let deployed = node.deploy("order.bpmn", &order_process()).await;
    let key = match &deployed.deployments[0].metadata {
        Some(deployment::Metadata::Process(process)) => process.process_definition_key,
        other => panic!("expected a process, got {other:?}"),
    };
    let created = node.create("order", "{}").await;
    let running = node
        .client()
        .delete_resource(DeleteResourceRequest {
            resource_key: key,
            operation_reference: None,
        })
        .await
        .unwrap_err();
    assert_eq!(running.code(), Code::FailedPrecondition, "{running:?}");
    assert!(
        running
            .message()
            .contains("there are still running instances"),
        "{running:?}"
    );
    node.client()
        .cancel_process_instance(CancelProcessInstanceRequest {
            process_instance_key: created.process_instance_key,
            operation_reference: None,
        })
        .await
        .expect("canceled");
    node.client()
        .delete_resource(DeleteResourceRequest {
            resource_key: key,
            operation_reference: Some(3),
        })
        .await
        .expect("deleted");
    let gone = node
        .client()
        .delete_resource(DeleteResourceRequest {
            resource_key: key,
            operation_reference: None,
        })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), Code::NotFound, "{gone:?}");
    let created = node
        .client()
        .create_process_instance(create("order", "{}"))
        .await
        .unwrap_err();
    assert_eq!(created.code(), Code::NotFound, "{created:?}");
}

#[tokio::test]
async fn commands_for_keys_that_do_not_exist_are_not_found() {
    let node = Node::start(1).await;
    let job = key::encode(1, 1);
    let mut client = node.client();
    let answers: Vec<(Intent, Result<(), tonic::Status>)> = vec![
        (
            JobIntent::Complete.into(),
            client
                .complete_job(CompleteJobRequest {
                    job_key: job,
                    ..Default::default()
                })
                .await
                .map(drop),
        ),
        (
            JobIntent::Fail.into(),
            client
                .fail_job(FailJobRequest {
                    job_key: job,
                    ..Default::default()
                })
                .await
                .map(drop),
        ),
        (
            JobIntent::UpdateRetries.into(),
            client
                .update_job_retries(UpdateJobRetriesRequest {
                    job_key: job,
                    retries: 1,
                    operation_reference: None,
                })
                .await
                .map(drop),
        ),
        (
            ProcessInstanceIntent::Cancel.into(),
            client
                .cancel_process_instance(CancelProcessInstanceRequest {
                    process_instance_key: job,
                    operation_reference: None,
                })
                .await
                .map(drop),
        ),
        (
            VariableDocumentIntent::Update.into(),
            client
                .set_variables(SetVariablesRequest {
                    element_instance_key: job,
                    ..Default::default()
                })
                .await
                .map(drop),
        ),
        (
            IncidentIntent::Resolve.into(),
            client
                .resolve_incident(ResolveIncidentRequest {
                    incident_key: job,
                    operation_reference: None,
                })
                .await
                .map(drop),
        ),
        (
            ProcessInstanceCreationIntent::Create.into(),
            client
                .create_process_instance(CreateProcessInstanceRequest {
                    bpmn_process_id: "missing".into(),
                    version: -1,
                    ..Default::default()
                })
                .await
                .map(drop),
        ),
    ];
    for (intent, answer) in answers {
        let status = answer.expect_err("nothing exists under that key");
        assert_eq!(
            status.code(),
            Code::NotFound,
            "{intent:?} answered {status:?}"
        );
        assert!(
            !status.message().is_empty(),
            "{intent:?} answered {status:?}"
        );
    }
}

#[tokio::test]
async fn keys_of_partitions_this_cluster_lacks_are_not_found() {
    if !supported(JobIntent::Complete) {
        return;
    }
    let node = Node::start(1).await;
    let status = node
        .client()
        .complete_job(CompleteJobRequest {
            job_key: key::encode(5, 1),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(status.message().contains("partition 5"), "{status:?}");
}

#[tokio::test]
async fn an_oversized_request_is_refused_and_the_node_keeps_serving() {
    let node = Node::start(1).await;
    let mut huge = message("big", "k", "");
    huge.variables = format!(r#"{{"blob":"{}"}}"#, "x".repeat(5 << 20));
    let status = node.client().publish_message(huge).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status
            .message()
            .contains("more than the gateway's maximum message size of 4194304 bytes"),
        "{status:?}"
    );
    node.assert_serving().await;

    // A configured limit holds too, for streaming calls as well.
    let small = Node::start_with(
        1,
        GatewayConfig {
            max_message_size: 16 << 10,
            ..GatewayConfig::default()
        },
        |_| {},
    )
    .await;
    let mut big = message("big", "k", "");
    big.variables = format!(r#"{{"blob":"{}"}}"#, "x".repeat(20 << 10));
    let status = small.client().publish_message(big).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("16384 bytes"), "{status:?}");
    let status = small
        .client()
        .activate_jobs(ActivateJobsRequest {
            r#type: "x".repeat(20 << 10),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    small.assert_serving().await;
}

/// Sends one raw gRPC call over HTTP/2 and returns its grpc-status and grpc-message (from the
/// headers of a trailers-only answer, or the trailers).
async fn raw_call(address: SocketAddr, path: &str, body: Vec<u8>) -> (String, String) {
    let tcp = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let (mut client, connection) = h2::client::handshake(tcp).await.expect("HTTP/2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("http://{address}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .expect("request");
    let (response, mut stream) = client.send_request(request, false).expect("send");
    // The server may answer before it reads the body (an unknown method) and close the stream.
    let _ = stream.send_data(Bytes::from(body), true);
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("an answer within 10 s")
        .expect("a response");
    let (parts, mut body) = response.into_parts();
    let header = |map: &http::HeaderMap, name: &str| {
        map.get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    if let Some(status) = header(&parts.headers, "grpc-status") {
        let message = header(&parts.headers, "grpc-message").unwrap_or_default();
        return (status, message);
    }
    while let Some(chunk) = body.data().await {
        let _ = chunk;
    }
    let trailers = body.trailers().await.expect("trailers").unwrap_or_default();
    (
        header(&trailers, "grpc-status").unwrap_or_default(),
        header(&trailers, "grpc-message").unwrap_or_default(),
    )
}

/// A gRPC frame: compression flag, big-endian length, message.
fn frame(flag: u8, declared_len: u32, message: &[u8]) -> Vec<u8> {
    let mut frame = vec![flag];
    frame.extend_from_slice(&declared_len.to_be_bytes());
    frame.extend_from_slice(message);
    frame
}

#[tokio::test]
async fn malformed_requests_get_an_error_and_the_node_keeps_serving() {
    let node = Node::start(1).await;
    let publish = "/gateway_protocol.Gateway/PublishMessage";
    let activate = "/gateway_protocol.Gateway/ActivateJobs";

    // Field 1 (name) claims 2^28 bytes and has four.
    let garbage = [0x0a, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 2, 3, 4];
    let (status, message) = raw_call(
        node.address,
        publish,
        frame(0, garbage.len() as u32, &garbage),
    )
    .await;
    // INTERNAL, as grpc-java (Zeebe's gateway) answers a request it cannot parse.
    assert_eq!(status, "13", "garbage protobuf: {message}");
    assert!(message.contains("failed%20to%20decode"), "{message}");

    // A string field that is not UTF-8.
    let not_utf8 = [0x0a, 0x02, 0xff, 0xfe];
    let (status, _) = raw_call(
        node.address,
        publish,
        frame(0, not_utf8.len() as u32, &not_utf8),
    )
    .await;
    assert_eq!(status, "13", "invalid UTF-8");

    // A frame that promises 100 bytes and ends after 3.
    let (status, _) = raw_call(node.address, publish, frame(0, 100, &[0x0a, 0x01, b'x'])).await;
    assert_eq!(status, "13", "a truncated frame");

    // A compression flag that does not exist, on a streaming call.
    let (status, _) = raw_call(node.address, activate, frame(7, 0, &[])).await;
    assert_eq!(status, "13", "a bad compression flag");

    // A frame header cut short.
    let (status, _) = raw_call(node.address, publish, vec![0, 0]).await;
    assert_eq!(status, "13", "a cut frame header");

    // A method that does not exist.
    let (status, _) = raw_call(
        node.address,
        "/gateway_protocol.Gateway/NoSuchMethod",
        frame(0, 0, &[]),
    )
    .await;
    assert_eq!(status, "12", "unknown methods are UNIMPLEMENTED");

    // Not HTTP/2 at all.
    let mut tcp = tokio::net::TcpStream::connect(node.address)
        .await
        .expect("connect");
    tcp.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\xfe garbage")
        .await
        .expect("write");
    let mut sink = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut sink)).await;

    // A connection that sends the preface and then nonsense frames.
    let mut tcp = tokio::net::TcpStream::connect(node.address)
        .await
        .expect("connect");
    let mut nonsense = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    nonsense.extend_from_slice(&[0xff; 64]);
    tcp.write_all(&nonsense).await.expect("write");
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut sink)).await;

    node.assert_serving().await;
}

#[tokio::test]
async fn over_the_in_flight_limit_commands_are_resource_exhausted() {
    // Answers wait for a slow flush, so two publishes stay in flight long enough for a third
    // to meet a fixed limit of two.
    let node = Node::start_with(
        1,
        GatewayConfig {
            backpressure: "fixed:2".parse().expect("backpressure setting"),
            ..GatewayConfig::default()
        },
        |config| config.flush = FlushPolicy::Delayed(Duration::from_millis(800)),
    )
    .await;
    let in_flight: Vec<_> = (0..2)
        .map(|i| {
            let mut client = node.client();
            tokio::spawn(async move {
                client
                    .publish_message(message("slow", &format!("k{i}"), ""))
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let status = node
        .client()
        .publish_message(message("slow", "k3", ""))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().starts_with(
            "Reached maximum capacity of requests handled: partition 1 has 2 commands in flight"
        ),
        "{status:?}"
    );
    for call in in_flight {
        call.await
            .expect("task")
            .expect("the first two are answered");
    }
    node.client()
        .publish_message(message("slow", "k4", ""))
        .await
        .expect("room again once they are answered");
}

#[tokio::test]
async fn a_partition_that_does_not_answer_in_time_is_deadline_exceeded() {
    let node = Node::start_with(
        1,
        GatewayConfig {
            request_timeout: Duration::from_millis(200),
            ..GatewayConfig::default()
        },
        |config| config.flush = FlushPolicy::Delayed(Duration::from_secs(3)),
    )
    .await;
    let status = node
        .client()
        .publish_message(message("late", "k", ""))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert_eq!(
        status.message(),
        "Time out between gateway and broker: no answer from partition 1 within 200ms"
    );
}

#[tokio::test]
async fn a_partition_that_did_not_open_is_unavailable_and_dead_in_the_topology() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let slots = vec![PartitionSlot::Unavailable(
        "corrupt log segment 3 at offset 4096".into(),
    )];
    let node = Node::serve(slots, GatewayConfig::default(), None, dir).await;
    let status = node
        .client()
        .publish_message(message("paid", "k", ""))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(
        status.message(),
        "Cannot accept requests for partition 1: corrupt log segment 3 at offset 4096"
    );
    let topology = node
        .client()
        .topology(TopologyRequest {})
        .await
        .expect("topology")
        .into_inner();
    let partition = &topology.brokers[0].partitions[0];
    assert_eq!(partition.role(), PartitionBrokerRole::Inactive);
    assert_eq!(partition.health(), PartitionBrokerHealth::Dead);
}

#[tokio::test]
async fn shutdown_answers_what_is_in_flight_then_stops_accepting() {
    let mut node = Node::start_with(1, GatewayConfig::default(), |config| {
        config.flush = FlushPolicy::Delayed(Duration::from_millis(500))
    })
    .await;
    let mut client = node.client();
    let in_flight =
        tokio::spawn(async move { client.publish_message(message("m", "k", "")).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    if let Some(stop) = node.stop.take() {
        stop.send(()).expect("server still running");
    }
    let answer = in_flight.await.expect("task");
    assert!(answer.is_ok(), "the call in flight is answered: {answer:?}");
    let server = node.server.take().expect("server task");
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server stops")
        .expect("task")
        .expect("serve returns cleanly");
    let refused = tokio::net::TcpStream::connect(node.address).await;
    assert!(refused.is_err(), "the port no longer accepts");
}

// ---------------------------------------------------------------------------------------------
// Whole flows, now that the engine executes processes.

fn order_process() -> String {
    ProcessBuilder::new("order")
        .start_event("start")
        .service_task("pay", "payment")
        .end_event("end")
        .build()
}

fn resource(name: &str, content: &str) -> Resource {
    Resource {
        name: name.into(),
        content: content.as_bytes().to_vec(),
    }
}

fn create(process: &str, variables: &str) -> CreateProcessInstanceRequest {
    CreateProcessInstanceRequest {
        bpmn_process_id: process.into(),
        version: -1,
        variables: variables.into(),
        ..Default::default()
    }
}

fn activate(job_type: &str, max: i32, request_timeout: i64) -> ActivateJobsRequest {
    ActivateJobsRequest {
        r#type: job_type.into(),
        worker: "gateway-test".into(),
        timeout: 60_000,
        max_jobs_to_activate: max,
        request_timeout,
        ..Default::default()
    }
}

impl Node {
    async fn deploy(&self, name: &str, content: &str) -> DeployResourceResponse {
        self.client()
            .deploy_resource(DeployResourceRequest {
                resources: vec![resource(name, content)],
                tenant_id: String::new(),
            })
            .await
            .expect("deployed")
            .into_inner()
    }

    /// Creates an instance, retrying while the deployment is still on its way to the
    /// partition the creation lands on.
    async fn create(&self, process: &str, variables: &str) -> CreateProcessInstanceResponse {
        for _ in 0..100 {
            match self
                .client()
                .create_process_instance(create(process, variables))
                .await
            {
                Ok(created) => return created.into_inner(),
                Err(status) if status.code() == Code::NotFound => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(status) => panic!("creation failed: {status:?}"),
            }
        }
        panic!("the deployment never reached every partition");
    }

    /// Every job the stream of one ActivateJobs call delivers.
    async fn activate(
        &self,
        request: ActivateJobsRequest,
    ) -> Result<Vec<ActivatedJob>, tonic::Status> {
        let mut stream = self.client().activate_jobs(request).await?.into_inner();
        let mut jobs = Vec::new();
        while let Some(response) = stream.message().await? {
            jobs.extend(response.jobs);
        }
        Ok(jobs)
    }

    /// The committed records of a partition.
    async fn records(&self, partition: u16) -> Vec<beeline_protocol::Record> {
        let handle = &self.partitions[usize::from(partition) - 1];
        handle.sync().await.expect("partition syncs");
        let mut reader = handle.reader().await.expect("reader");
        let mut records = Vec::new();
        while let Some(record) = reader.next_record().expect("readable log") {
            records.push(record);
        }
        records
    }
}

#[tokio::test]
async fn a_process_is_deployed_started_and_its_job_worked_through_the_gateway() {
    let node = Node::start(1).await;
    let deployed = node.deploy("order.bpmn", &order_process()).await;
    assert!(deployed.key > 0);
    assert_eq!(deployed.tenant_id, "<default>");
    let Some(deployment::Metadata::Process(process)) = &deployed.deployments[0].metadata else {
        panic!("a process: {deployed:?}");
    };
    assert_eq!(process.bpmn_process_id, "order");
    assert_eq!(process.version, 1);
    assert_eq!(process.resource_name, "order.bpmn");

    let created = node.create("order", r#"{"amount": 5}"#).await;
    assert_eq!(created.bpmn_process_id, "order");
    assert_eq!(
        created.process_definition_key,
        process.process_definition_key
    );
    assert_eq!(created.version, 1);
    assert!(created.process_instance_key > 0);
    assert_eq!(created.tenant_id, "<default>");

    let jobs = node
        .activate(activate("payment", 10, 5_000))
        .await
        .expect("activated");
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let job = &jobs[0];
    assert_eq!(job.r#type, "payment");
    assert_eq!(job.process_instance_key, created.process_instance_key);
    assert_eq!(job.bpmn_process_id, "order");
    assert_eq!(job.element_id, "pay");
    assert_eq!(job.worker, "gateway-test");
    assert!(job.deadline > 0);
    assert!(job.variables.contains("\"amount\""), "{}", job.variables);
    assert_eq!(job.kind(), activated_job::JobKind::BpmnElement);
    assert_eq!(
        job.listener_event_type(),
        activated_job::ListenerEventType::Unspecified
    );

    node.client()
        .complete_job(CompleteJobRequest {
            job_key: job.key,
            variables: r#"{"paid": true}"#.into(),
            result: None,
        })
        .await
        .expect("completed");
    let again = node
        .client()
        .complete_job(CompleteJobRequest {
            job_key: job.key,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::NotFound, "{again:?}");
    assert!(
        again
            .message()
            .starts_with("Command 'COMPLETE' rejected with code 'NOT_FOUND': "),
        "{again:?}"
    );

    let bad = node
        .client()
        .deploy_resource(DeployResourceRequest {
            resources: vec![resource("broken.bpmn", "<definitions")],
            tenant_id: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");
    assert!(
        bad.message()
            .starts_with("Command 'CREATE' rejected with code 'INVALID_ARGUMENT': "),
        "{bad:?}"
    );
}

#[tokio::test]
async fn a_long_poll_waits_and_wakes_when_a_job_is_created() {
    let node = Node::start(2).await;
    node.deploy("order.bpmn", &order_process()).await;

    // Nothing yet: without waiting the call ends at once, empty.
    let started = std::time::Instant::now();
    let none = node
        .activate(activate("payment", 1, -1))
        .await
        .expect("answered");
    assert!(none.is_empty());
    assert!(started.elapsed() < Duration::from_secs(2));

    // A short wait ends empty at its deadline.
    let started = std::time::Instant::now();
    let none = node
        .activate(activate("payment", 1, 300))
        .await
        .expect("answered");
    assert!(none.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(300));

    // A long wait is answered as soon as a job exists: the partition's notification wakes
    // it well before the 5 s probe would.
    let waiting = {
        let node_client = node.client();
        tokio::spawn(async move {
            let mut client = node_client;
            let started = std::time::Instant::now();
            let mut stream = client
                .activate_jobs(activate("payment", 5, 20_000))
                .await
                .expect("call")
                .into_inner();
            let mut jobs = Vec::new();
            while let Some(response) = stream.message().await.expect("stream") {
                jobs.extend(response.jobs);
            }
            (jobs, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let created = node.create("order", "{}").await;
    let (jobs, waited) = waiting.await.expect("task");
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0].process_instance_key, created.process_instance_key);
    assert!(waited < Duration::from_secs(4), "woken late: {waited:?}");
}

#[tokio::test]
async fn jobs_fail_into_incidents_get_retries_and_are_resolved() {
    let node = Node::start(1).await;
    node.deploy("order.bpmn", &order_process()).await;
    let created = node.create("order", "{}").await;
    let job = node
        .activate(activate("payment", 1, 5_000))
        .await
        .expect("activated")[0]
        .clone();

    node.client()
        .update_job_timeout(UpdateJobTimeoutRequest {
            job_key: job.key,
            timeout: 120_000,
            operation_reference: None,
        })
        .await
        .expect("timeout updated");
    let negative = node
        .client()
        .fail_job(FailJobRequest {
            job_key: job.key,
            retries: -1,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(negative.code(), Code::InvalidArgument);
    assert_eq!(
        negative.message(),
        "The value for retries is '-1' but must be 0 or greater"
    );
    node.client()
        .fail_job(FailJobRequest {
            job_key: job.key,
            retries: 0,
            error_message: "the payment service is down".into(),
            retry_back_off: 0,
            variables: String::new(),
        })
        .await
        .expect("failed");
    node.client()
        .update_job_retries(UpdateJobRetriesRequest {
            job_key: job.key,
            retries: 2,
            operation_reference: Some(7),
        })
        .await
        .expect("retries updated");

    let incident = node
        .records(1)
        .await
        .into_iter()
        .find(|r| r.intent == IncidentIntent::Created.into())
        .expect("an incident for the job without retries");
    node.client()
        .resolve_incident(ResolveIncidentRequest {
            incident_key: incident.key,
            operation_reference: None,
        })
        .await
        .expect("resolved");
    let again = node
        .client()
        .resolve_incident(ResolveIncidentRequest {
            incident_key: incident.key,
            operation_reference: None,
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::NotFound, "{again:?}");

    let job = node
        .activate(activate("payment", 1, 5_000))
        .await
        .expect("activated")[0]
        .clone();
    assert_eq!(job.process_instance_key, created.process_instance_key);
    assert_eq!(job.retries, 2);
    node.client()
        .throw_error(ThrowErrorRequest {
            job_key: job.key,
            error_code: "NOT_PAID".into(),
            error_message: "declined".into(),
            variables: String::new(),
        })
        .await
        .expect("error thrown (uncaught: an incident)");
}

#[tokio::test]
async fn variables_are_set_and_instances_canceled() {
    let node = Node::start(1).await;
    node.deploy("order.bpmn", &order_process()).await;
    let created = node.create("order", r#"{"a": 1}"#).await;
    let set = node
        .client()
        .set_variables(SetVariablesRequest {
            element_instance_key: created.process_instance_key,
            variables: r#"{"b": 2}"#.into(),
            local: false,
            operation_reference: None,
        })
        .await
        .expect("variables set")
        .into_inner();
    assert!(set.key > 0);
    let bad = node
        .client()
        .set_variables(SetVariablesRequest {
            element_instance_key: created.process_instance_key,
            variables: "\"b\"".into(),
            local: true,
            operation_reference: None,
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().contains("'STRING'"), "{bad:?}");

    node.client()
        .cancel_process_instance(CancelProcessInstanceRequest {
            process_instance_key: created.process_instance_key,
            operation_reference: None,
        })
        .await
        .expect("canceled");
    let again = node
        .client()
        .cancel_process_instance(CancelProcessInstanceRequest {
            process_instance_key: created.process_instance_key,
            operation_reference: None,
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::NotFound, "{again:?}");
    assert!(
        again.message().starts_with("Command 'CANCEL' rejected"),
        "{again:?}"
    );
}

#[tokio::test]
async fn an_instance_is_modified_and_bad_instructions_are_refused_with_zeebes_codes() {
    let node = Node::start(1).await;
    let process = ProcessBuilder::new("two")
        .start_event("start")
        .service_task("first", "first")
        .service_task("second", "second")
        .end_event("end")
        .build();
    node.deploy("two.bpmn", &process).await;
    let created = node.create("two", "{}").await;
    let instance = created.process_instance_key;
    let first = node
        .records(1)
        .await
        .into_iter()
        .find(|r| {
            r.intent == ProcessInstanceIntent::ElementActivated.into()
                && r.value_as::<beeline_protocol::value::ProcessInstanceRecord>()
                    .is_some_and(|v| v.element_id == "first")
        })
        .expect("first activated")
        .key;
    let request = |element: &str, terminate: i64| ModifyProcessInstanceRequest {
        process_instance_key: instance,
        activate_instructions: vec![modify_process_instance_request::ActivateInstruction {
            element_id: element.into(),
            ancestor_element_instance_key: -1,
            variable_instructions: vec![modify_process_instance_request::VariableInstruction {
                variables: r#"{"moved": true}"#.into(),
                scope_id: String::new(),
            }],
        }],
        terminate_instructions: vec![modify_process_instance_request::TerminateInstruction {
            element_instance_key: terminate,
        }],
        operation_reference: None,
    };
    let unknown = node
        .client()
        .modify_process_instance(request("nowhere", first))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::InvalidArgument, "{unknown:?}");
    assert!(
        unknown
            .message()
            .contains("activate instructions with an element that could not be found: 'nowhere'"),
        "{unknown:?}"
    );
    let missing = node
        .client()
        .modify_process_instance(ModifyProcessInstanceRequest {
            process_instance_key: key::encode(1, 999),
            ..request("second", first)
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "{missing:?}");
    let bad = node
        .client()
        .modify_process_instance(ModifyProcessInstanceRequest {
            activate_instructions: vec![modify_process_instance_request::ActivateInstruction {
                element_id: "second".into(),
                ancestor_element_instance_key: -1,
                variable_instructions: vec![modify_process_instance_request::VariableInstruction {
                    variables: "[1]".into(),
                    scope_id: String::new(),
                }],
            }],
            ..request("second", first)
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");

    node.client()
        .modify_process_instance(request("second", first))
        .await
        .expect("modified");
    let jobs = node.activate(activate("second", 1, 1_000)).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].variables, r#"{"moved":true}"#);
    let none = node.activate(activate("first", 1, 100)).await.unwrap();
    assert!(none.is_empty(), "the first task was terminated");
}

#[tokio::test]
async fn a_created_instance_answers_with_its_result_when_a_message_completes_it() {
    // Three partitions: the instance, the message and the subscription may each live on
    // another one, and the gateway must publish where the engine subscribes.
    let node = Node::start(3).await;
    let process = ProcessBuilder::new("shipment")
        .message("shipped", Some("=orderId"))
        .start_event("start")
        .receive_task("await", "shipped")
        .end_event("end")
        .build();
    node.deploy("shipment.bpmn", &process).await;
    // Once every partition has the process, a creation with result may land on any of them.
    for _ in 0..3 {
        node.create("shipment", r#"{"orderId": "warm-up"}"#).await;
    }
    let waiting = {
        let mut client = node.client();
        tokio::spawn(async move {
            client
                .create_process_instance_with_result(CreateProcessInstanceWithResultRequest {
                    request: Some(create("shipment", r#"{"orderId": "o-42"}"#)),
                    request_timeout: 10_000,
                    fetch_variables: Vec::new(),
                })
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    node.client()
        .publish_message(PublishMessageRequest {
            name: "shipped".into(),
            correlation_key: "o-42".into(),
            time_to_live: 10_000,
            message_id: String::new(),
            variables: r#"{"carrier": "rail"}"#.into(),
            tenant_id: String::new(),
        })
        .await
        .expect("published");
    let result = waiting
        .await
        .expect("task")
        .expect("the instance completed")
        .into_inner();
    assert_eq!(result.bpmn_process_id, "shipment");
    assert!(
        result.variables.contains("\"carrier\""),
        "{}",
        result.variables
    );
    assert!(
        result.variables.contains("\"o-42\""),
        "{}",
        result.variables
    );

    // Nothing completes this one within its request timeout.
    let status = node
        .client()
        .create_process_instance_with_result(CreateProcessInstanceWithResultRequest {
            request: Some(create("shipment", r#"{"orderId": "never"}"#)),
            request_timeout: 300,
            fetch_variables: Vec::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
}

/// The Node SDK (@camunda8/sdk) gzips every request; grpc-java, Zeebe's gateway, accepts that.
#[tokio::test]
async fn gzip_compressed_requests_are_accepted() {
    let node = Node::start(1).await;
    let client = node
        .client()
        .send_compressed(tonic::codec::CompressionEncoding::Gzip);
    let topology = client.clone().topology(TopologyRequest {}).await;
    assert!(topology.is_ok(), "{topology:?}");
    let mut request = message("compressed", "k", "gz-1");
    request.variables = format!(r#"{{"text":"{}"}}"#, "beeline ".repeat(1000));
    let published = client.clone().publish_message(request).await;
    assert!(published.is_ok(), "{published:?}");
    let duplicate = client
        .clone()
        .publish_message(message("compressed", "k", "gz-1"))
        .await
        .unwrap_err();
    assert_eq!(duplicate.code(), Code::AlreadyExists, "{duplicate:?}");
}

/// grpc.health.v1, as Zeebe's gateway serves it (pyzeebe's `healthcheck()` calls it).
#[tokio::test]
async fn the_health_service_answers_for_the_gateway() {
    use beeline_gateway::proto::health::HealthCheckRequest;
    use beeline_gateway::proto::health::health_check_response::ServingStatus;
    use beeline_gateway::proto::health::health_client::HealthClient;

    let mut node = Node::start(1).await;
    let mut health = HealthClient::connect(format!("http://{}", node.address))
        .await
        .expect("health client connects");
    let ask = |service: &str| HealthCheckRequest {
        service: service.into(),
    };
    for service in ["", "gateway_protocol.Gateway"] {
        let answer = health
            .check(ask(service))
            .await
            .expect("check")
            .into_inner();
        assert_eq!(answer.status(), ServingStatus::Serving, "{service:?}");
    }
    let unknown = health.check(ask("no.Such")).await.unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
    assert_eq!(unknown.message(), "unknown service no.Such");

    let mut watched = health
        .watch(ask("gateway_protocol.Gateway"))
        .await
        .expect("watch")
        .into_inner();
    let mut unknown = health
        .watch(ask("no.Such"))
        .await
        .expect("watch")
        .into_inner();
    let first = watched.message().await.expect("a first answer");
    assert_eq!(first.map(|a| a.status()), Some(ServingStatus::Serving));
    let first = unknown.message().await.expect("a first answer");
    assert_eq!(
        first.map(|a| a.status()),
        Some(ServingStatus::ServiceUnknown)
    );

    // Shutting down: the watch says NOT_SERVING and ends, and does not hold up the server.
    let _ = node.stop.take().expect("running").send(());
    let last = watched.message().await.expect("an answer at shutdown");
    assert_eq!(last.map(|a| a.status()), Some(ServingStatus::NotServing));
    assert!(matches!(watched.message().await, Ok(None) | Err(_)));
    assert!(matches!(unknown.message().await, Ok(None) | Err(_)));
    let server = node.server.take().expect("server task");
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server stops despite open watches")
        .expect("server task")
        .expect("served");
}

#[tokio::test]
async fn signals_are_broadcast() {
    let node = Node::start(2).await;
    let response = node
        .client()
        .broadcast_signal(BroadcastSignalRequest {
            signal_name: "go".into(),
            variables: r#"{"x": 1}"#.into(),
            tenant_id: String::new(),
        })
        .await
        .expect("broadcast")
        .into_inner();
    assert!(response.key > 0);
    assert_eq!(response.tenant_id, "<default>");
    let status = node
        .client()
        .broadcast_signal(BroadcastSignalRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(status.message(), "No signalName provided");
}

const DISHES: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="dishes" name="Dishes" namespace="http://beeline.test/gateway">
  <decision id="dish" name="Dish">
    <decisionTable id="dish_table" hitPolicy="UNIQUE">
      <input id="season" label="Season"><inputExpression id="season_expr" typeRef="string"><text>season</text></inputExpression></input>
      <output id="dish_out" label="Dish" name="dish" typeRef="string"/>
      <rule id="fall"><inputEntry id="fall_in"><text>"Fall"</text></inputEntry><outputEntry id="fall_out"><text>"Stew"</text></outputEntry></rule>
      <rule id="any_fall"><inputEntry id="any_in"><text>"Fall","Winter"</text></inputEntry><outputEntry id="any_out"><text>"Soup"</text></outputEntry></rule>
    </decisionTable>
  </decision>
</definitions>"#;

#[tokio::test]
async fn decisions_are_evaluated() {
    let node = Node::start(1).await;
    let deployed = node.deploy("dishes.dmn", DISHES).await;
    let decision = deployed
        .deployments
        .iter()
        .find_map(|d| match &d.metadata {
            Some(deployment::Metadata::Decision(decision)) => Some(decision.clone()),
            _ => None,
        })
        .expect("a decision in the deployment");
    assert_eq!(decision.dmn_decision_id, "dish");

    let evaluate = |variables: &str| EvaluateDecisionRequest {
        decision_key: 0,
        decision_id: "dish".into(),
        variables: variables.into(),
        tenant_id: String::new(),
    };
    let evaluated = node
        .client()
        .evaluate_decision(evaluate(r#"{"season": "Winter"}"#))
        .await
        .expect("evaluated")
        .into_inner();
    assert_eq!(evaluated.decision_key, decision.decision_key);
    assert_eq!(evaluated.decision_output, r#""Soup""#);
    assert!(evaluated.failed_decision_id.is_empty());
    assert!(evaluated.decision_evaluation_key > 0);
    assert_eq!(evaluated.evaluated_decisions.len(), 1);
    assert_eq!(
        evaluated.evaluated_decisions[0].matched_rules[0].rule_id,
        "any_fall"
    );

    // Two rules match under UNIQUE: a failed evaluation is an answer naming the decision.
    let failed = node
        .client()
        .evaluate_decision(evaluate(r#"{"season": "Fall"}"#))
        .await
        .expect("answered")
        .into_inner();
    assert_eq!(failed.failed_decision_id, "dish", "{failed:?}");
    assert!(!failed.failure_message.is_empty());

    let missing = node
        .client()
        .evaluate_decision(EvaluateDecisionRequest {
            decision_id: "nope".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "{missing:?}");
}

#[tokio::test]
async fn a_job_stream_pushes_jobs_as_they_are_created() {
    let node = Node::start(1).await;
    node.deploy("order.bpmn", &order_process()).await;
    // Created before the stream opened: the stream activates it itself.
    let waiting = node
        .create("order", r#"{"i": -1}"#)
        .await
        .process_instance_key;
    let mut stream = node
        .client()
        .stream_activated_jobs(StreamActivatedJobsRequest {
            r#type: "payment".into(),
            worker: "streamer".into(),
            timeout: 60_000,
            fetch_variable: Vec::new(),
            tenant_ids: Vec::new(),
        })
        .await
        .expect("stream opened")
        .into_inner();
    let mut created = Vec::new();
    for i in 0..3 {
        created.push(
            node.create("order", &format!(r#"{{"i": {i}}}"#))
                .await
                .process_instance_key,
        );
    }
    let mut pushed = Vec::new();
    while pushed.len() < 4 {
        let job = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("a job within 10 s")
            .expect("stream")
            .expect("open");
        assert_eq!(job.worker, "streamer");
        node.client()
            .complete_job(CompleteJobRequest {
                job_key: job.key,
                ..Default::default()
            })
            .await
            .expect("completed");
        pushed.push(job.process_instance_key);
    }
    created.push(waiting);
    pushed.sort_unstable();
    created.sort_unstable();
    assert_eq!(pushed, created);
    // The three created while the stream was open went without an activation command.
    let metrics = node.partitions[0].metrics();
    assert_eq!(PartitionMetrics::get(&metrics.jobs_pushed), 3);
}

#[tokio::test]
async fn shutdown_ends_waiting_long_polls_at_once() {
    let mut node = Node::start(1).await;
    let mut client = node.client();
    let waiting = tokio::spawn(async move {
        let started = std::time::Instant::now();
        let mut stream = client
            .activate_jobs(activate("nobody-makes-these", 1, 60_000))
            .await?
            .into_inner();
        while stream.message().await?.is_some() {}
        Ok::<_, tonic::Status>(started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    if let Some(stop) = node.stop.take() {
        stop.send(()).expect("server still running");
    }
    let waited = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the long poll ends")
        .expect("task")
        .expect("ended without error");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
}

#[tokio::test]
async fn new_instances_go_round_robin_and_an_exhausted_cluster_says_so() {
    let node = Node::start_with(
        2,
        GatewayConfig {
            backpressure: "fixed:1".parse().expect("backpressure setting"),
            ..GatewayConfig::default()
        },
        |config| config.flush = FlushPolicy::Delayed(Duration::from_millis(800)),
    )
    .await;
    // Each creation holds its partition's only place until the slow flush answers it (a
    // rejection: nothing is deployed); the third finds both partitions full.
    let holding: Vec<_> = (0..2)
        .map(|_| {
            let mut client = node.client();
            tokio::spawn(async move { client.create_process_instance(create("none", "{}")).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let status = node
        .client()
        .create_process_instance(create("none", "{}"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().starts_with(
            "Expected to execute the command on one of the partitions, but all failed"
        ),
        "{status:?}"
    );
    for call in holding {
        let answer = call.await.expect("task");
        assert_eq!(answer.unwrap_err().code(), Code::NotFound);
    }
}
