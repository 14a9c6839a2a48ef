//! The gateway end to end: real partitions (stream processor and engine over in-memory logs and
//! stores), the gateway served on an ephemeral port, and the generated tonic client — plus a raw
//! HTTP/2 client for what no well-behaved client sends.

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
use beeline_gateway::{Cluster, Gateway, GatewayConfig, NodeInfo, PartitionSlot};
use beeline_log::MemJournal;
use beeline_protocol::Intent;
use beeline_protocol::intent::{
    IncidentIntent, JobBatchIntent, JobIntent, ProcessInstanceCreationIntent,
    ProcessInstanceIntent, VariableDocumentIntent,
};
use beeline_protocol::key;
use beeline_state::snapshot::SnapshotStore;
use beeline_state::{MemStore, Store};
use beeline_stream::{FlushPolicy, Partition, PartitionConfig, SystemClock};
use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::Code;
use tonic::transport::Channel;

struct Node {
    address: SocketAddr,
    client: GatewayClient<Channel>,
    stop: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<Result<(), tonic::transport::Error>>>,
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
        let mut slots = Vec::new();
        for id in 1..=partitions {
            slots.push(PartitionSlot::Open(open_partition(
                dir.path(),
                id,
                &configure,
            )));
        }
        Self::serve(slots, config, dir).await
    }

    async fn serve(
        slots: Vec<PartitionSlot>,
        config: GatewayConfig,
        dir: tempfile::TempDir,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral port");
        let address = listener.local_addr().expect("local address");
        let node = NodeInfo {
            node_id: 0,
            host: "127.0.0.1".into(),
            port: address.port(),
            version: "0.1.0-test".into(),
        };
        let gateway = Gateway::new(Cluster::single_node(node, slots), config);
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            gateway
                .serve(listener, async {
                    let _ = stopped.await;
                })
                .await
        });
        let client = GatewayClient::connect(format!("http://{address}"))
            .await
            .expect("client connects");
        Self {
            address,
            client,
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
    configure: &impl Fn(&mut PartitionConfig),
) -> beeline_stream::PartitionHandle {
    let mut config = PartitionConfig::new(id);
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
    let status = node
        .client()
        .broadcast_signal(BroadcastSignalRequest {
            signal_name: "go".into(),
            variables: String::new(),
            tenant_id: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unimplemented);
    assert!(
        status
            .message()
            .starts_with("Beeline does not support broadcasting signals yet"),
        "{status:?}"
    );

    // The RPCs the engine is growing processors for: UNIMPLEMENTED exactly while the engine
    // lacks the intent, so this test keeps holding as processors arrive.
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
        let unimplemented = matches!(&answer, Err(s) if s.code() == Code::Unimplemented);
        assert_eq!(
            unimplemented,
            !supported(intent),
            "{intent:?} answered {answer:?}"
        );
        if let Err(status) = &answer
            && unimplemented
        {
            assert!(
                status.message().starts_with("Beeline does not support"),
                "{status:?}"
            );
            assert!(status.message().contains(intent.name()), "{status:?}");
        }
    }
}

#[tokio::test]
async fn job_activation_is_unimplemented_until_the_engine_activates_jobs() {
    if supported(JobBatchIntent::Activate) {
        return;
    }
    let node = Node::start(1).await;
    let status = node
        .client()
        .activate_jobs(ActivateJobsRequest {
            r#type: "pay".into(),
            worker: "w".into(),
            timeout: 1000,
            max_jobs_to_activate: 1,
            request_timeout: -1,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unimplemented);
    assert!(status.message().contains("activating jobs"), "{status:?}");
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
    stream
        .send_data(Bytes::from(body), true)
        .expect("send body");
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
    let node = Node::serve(slots, GatewayConfig::default(), dir).await;
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
