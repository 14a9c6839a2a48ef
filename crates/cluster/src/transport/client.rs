//! The sending side: a partition group's `RaftNetworkV2` over the broker's shared channels.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use openraft::error::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, v2::RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use tonic::transport::{Channel, Endpoint};

use super::convert;
use super::proto;
use super::proto::internal_client::InternalClient;
use crate::metrics::GroupMetrics;
use crate::state_machine::{Snapshot, SnapshotData};
use crate::types::{NodeId, TypeConfig, Vote};

/// One channel (one HTTP/2 connection) per broker, shared by every partition group, and the
/// brokers' internal addresses as this broker knows them. A group's membership names brokers
/// by id only: where a broker is reached is this broker's own knowledge (its contact points,
/// or what it learns), so two brokers may reach a third by different routes.
#[derive(Clone, Default)]
pub struct Peers {
    channels: Arc<Mutex<HashMap<NodeId, (String, Channel)>>>,
    addresses: Arc<Mutex<HashMap<NodeId, String>>>,
    /// Channels by address, for brokers known before their id (contact points, membership).
    by_address: Arc<Mutex<HashMap<String, Channel>>>,
}

impl Peers {
    /// Peers at these internal addresses (`host:port`), by node id.
    pub fn with_addresses(addresses: impl IntoIterator<Item = (NodeId, String)>) -> Self {
        Self {
            channels: Arc::default(),
            addresses: Arc::new(Mutex::new(addresses.into_iter().collect())),
            by_address: Arc::default(),
        }
    }

    /// The channel to the broker whose internal API is at `addr`, made on first use and
    /// connected lazily (and again after a failure) by tonic.
    pub fn channel_to(&self, addr: &str) -> Result<Channel, String> {
        let mut channels = self.by_address.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(channel) = channels.get(addr) {
            return Ok(channel.clone());
        }
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| format!("'{addr}': {e}"))?
            .tcp_nodelay(true)
            .http2_adaptive_window(true)
            .connect_timeout(std::time::Duration::from_secs(2))
            .connect_lazy();
        channels.insert(addr.to_string(), channel.clone());
        Ok(channel)
    }

    /// Broker `node` is (now) reached at `addr`.
    pub fn set_address(&self, node: NodeId, addr: String) {
        self.addresses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(node, addr);
    }

    /// Where broker `node` is reached: its known address, else the one its membership gives.
    fn address(&self, node: NodeId, membership: &str) -> String {
        self.addresses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&node)
            .cloned()
            .unwrap_or_else(|| membership.to_string())
    }

    /// The channel to broker `node` at `addr` (`host:port` of its internal API), made on first
    /// use and connected lazily (and again after a failure) by tonic.
    fn channel(&self, node: NodeId, addr: &str) -> Result<Channel, String> {
        let mut channels = self.channels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((known, channel)) = channels.get(&node)
            && known == addr
        {
            return Ok(channel.clone());
        }
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| format!("broker {node}'s internal address '{addr}': {e}"))?
            .tcp_nodelay(true)
            .http2_adaptive_window(true)
            .connect_lazy();
        channels.insert(node, (addr.to_string(), channel.clone()));
        Ok(channel)
    }
}

/// Makes a partition group's clients to its peers.
#[derive(Clone)]
pub struct GroupNetworkFactory {
    partition_id: u32,
    peers: Peers,
    metrics: Arc<GroupMetrics>,
}

impl GroupNetworkFactory {
    pub fn new(partition_id: u32, peers: Peers) -> Self {
        Self {
            partition_id,
            peers,
            metrics: Arc::default(),
        }
    }

    /// Counts the group's snapshot sends in `metrics`.
    pub fn with_metrics(self, metrics: Arc<GroupMetrics>) -> Self {
        Self { metrics, ..self }
    }
}

impl RaftNetworkFactory<TypeConfig> for GroupNetworkFactory {
    type Network = GroupNetwork;

    async fn new_client(
        &mut self,
        target: NodeId,
        node: &openraft::impls::BasicNode,
    ) -> GroupNetwork {
        GroupNetwork {
            partition_id: self.partition_id,
            target,
            metrics: self.metrics.clone(),
            client: self
                .peers
                .channel(target, &self.peers.address(target, &node.addr))
                .map(|channel| {
                    InternalClient::new(channel)
                        .max_decoding_message_size(64 * 1024 * 1024)
                        .max_encoding_message_size(64 * 1024 * 1024)
                }),
        }
    }
}

/// A partition group's client to one peer.
pub struct GroupNetwork {
    partition_id: u32,
    target: NodeId,
    metrics: Arc<GroupMetrics>,
    client: Result<InternalClient<Channel>, String>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct TransportError(String);

impl GroupNetwork {
    fn client(&self) -> Result<InternalClient<Channel>, RPCError<TypeConfig>> {
        self.client
            .clone()
            .map_err(|reason| RPCError::Unreachable(Unreachable::new(&TransportError(reason))))
    }

    fn failed(&self, status: tonic::Status) -> RPCError<TypeConfig> {
        let error = TransportError(format!(
            "broker {} (partition {}): {}",
            self.target,
            self.partition_id,
            status.message()
        ));
        match status.code() {
            tonic::Code::Unavailable | tonic::Code::Unknown => {
                RPCError::Unreachable(Unreachable::new(&error))
            }
            _ => RPCError::Network(NetworkError::new(&error)),
        }
    }
}

fn with_deadline<T>(message: T, option: &RPCOption) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(option.hard_ttl());
    request
}

fn malformed(e: convert::Malformed) -> RPCError<TypeConfig> {
    RPCError::Network(NetworkError::new(&e))
}

impl RaftNetworkV2<TypeConfig> for GroupNetwork {
    type SnapshotData = SnapshotData;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        let mut request = convert::append_to(self.partition_id, &rpc).map_err(malformed)?;
        request.to_node = self.target;
        let response = self
            .client()?
            .append_entries(with_deadline(request, &option))
            .await
            .map_err(|status| self.failed(status))?;
        convert::append_response_from(response.into_inner()).map_err(malformed)
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let mut request = convert::vote_request_to(self.partition_id, &rpc);
        request.to_node = self.target;
        let response = self
            .client()?
            .vote(with_deadline(request, &option))
            .await
            .map_err(|status| self.failed(status))?;
        convert::vote_response_from(response.into_inner()).map_err(malformed)
    }

    /// Streams the snapshot's directory in chunks (see [`super::snapshot`]); the whole call
    /// may take as long as the transfer does, each chunk at most the group's snapshot timeout.
    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: Snapshot,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let network = |e: String| StreamingError::Network(NetworkError::new(&TransportError(e)));
        let meta = convert::snapshot_meta_to(&snapshot.meta).map_err(|e| network(e.to_string()))?;
        let header = proto::SnapshotHeader {
            partition_id: self.partition_id,
            to_node: self.target,
            vote: Some(convert::vote_to(&vote)),
            meta: Some(meta),
            position: snapshot.snapshot.position,
        };
        let mut client = self.client().map_err(StreamingError::from)?;
        let chunks = super::snapshot::chunks(header, &snapshot.snapshot, option.hard_ttl())
            .map_err(network)?;
        let sent = tokio::select! {
            sent = client.install_snapshot(chunks) => sent,
            closed = cancel => return Err(StreamingError::Closed(closed)),
        };
        let response = match sent {
            Ok(response) => response.into_inner(),
            Err(status) => {
                GroupMetrics::add(&self.metrics.snapshot_sends_failed, 1);
                tracing::info!(
                    partition = self.partition_id,
                    to = self.target,
                    error = %status.message(),
                    "a snapshot send failed"
                );
                return Err(StreamingError::from(self.failed(status)));
            }
        };
        GroupMetrics::add(&self.metrics.snapshots_sent, 1);
        tracing::info!(
            partition = self.partition_id,
            to = self.target,
            position = snapshot.snapshot.position,
            last_log_id = ?snapshot.meta.last_log_id,
            "sent a snapshot"
        );
        let vote = convert::vote_from(response.vote).map_err(|e| network(e.to_string()))?;
        Ok(SnapshotResponse::new(vote))
    }
}
