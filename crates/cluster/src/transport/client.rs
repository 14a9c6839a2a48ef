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

use super::proto;
use super::proto::internal_client::InternalClient;
use super::{Ballot, convert};
use crate::metrics::GroupMetrics;
use crate::state_machine::{Snapshot, SnapshotData};
use crate::types::{NodeId, TypeConfig, Vote};

/// One channel (one HTTP/2 connection) per broker, shared by every partition group, the
/// membership's gossip, forwarded commands, commands between partitions and job streams; and
/// the brokers' internal addresses as this broker knows them. A group's membership names
/// brokers by id only: where a broker is reached is this broker's own knowledge (what the
/// membership learns from the broker itself), so two brokers may reach a third by different
/// routes.
#[derive(Clone, Default)]
pub struct Peers {
    addresses: Arc<Mutex<HashMap<NodeId, String>>>,
    /// The channels, by internal address: one per broker, whichever side needs it first.
    channels: Arc<Mutex<HashMap<String, Channel>>>,
}

impl Peers {
    /// Peers at these internal addresses (`host:port`), by node id.
    pub fn with_addresses(addresses: impl IntoIterator<Item = (NodeId, String)>) -> Self {
        Self {
            addresses: Arc::new(Mutex::new(addresses.into_iter().collect())),
            channels: Arc::default(),
        }
    }

    /// The channel to the broker whose internal API is at `addr`, made on first use and
    /// connected lazily (and again after a failure) by tonic.
    pub fn channel_to(&self, addr: &str) -> Result<Channel, String> {
        let mut channels = self.channels.lock().unwrap_or_else(|e| e.into_inner());
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

    /// Where broker `node` is reached, once known.
    pub fn address(&self, node: NodeId) -> Option<String> {
        self.addresses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&node)
            .cloned()
    }

    /// The channel to broker `node`, once its address is known.
    pub(crate) fn channel(&self, node: NodeId) -> Result<Channel, String> {
        let addr = self.address(node).ok_or_else(|| {
            format!(
                "broker {node}'s internal address is not known yet (it has not been heard from)"
            )
        })?;
        self.channel_to(&addr)
            .map_err(|e| format!("broker {node}'s internal address {e}"))
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
            peers: self.peers.clone(),
            named: node.addr.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

/// A partition group's client to one peer.
pub struct GroupNetwork {
    partition_id: u32,
    target: NodeId,
    /// Looked up at every call: a broker's address may be learnt (or change) after the
    /// group's client to it is made.
    peers: Peers,
    /// The address the group's membership gives, if any (used while the broker's own is not
    /// known).
    named: String,
    metrics: Arc<GroupMetrics>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct TransportError(String);

impl GroupNetwork {
    fn client(&self) -> Result<InternalClient<Channel>, RPCError<TypeConfig>> {
        let channel = match self.peers.address(self.target) {
            None if !self.named.is_empty() => self.peers.channel_to(&self.named),
            _ => self.peers.channel(self.target),
        };
        channel
            .map(|channel| {
                InternalClient::new(channel)
                    .max_decoding_message_size(64 * 1024 * 1024)
                    .max_encoding_message_size(64 * 1024 * 1024)
            })
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

impl GroupNetwork {
    async fn ask_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
        ballot: Ballot,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let mut request = convert::vote_request_to(self.partition_id, &rpc);
        request.to_node = self.target;
        let request = with_deadline(request, &option);
        let mut client = self.client()?;
        let response = match ballot {
            Ballot::Vote => client.vote(request).await,
            Ballot::PreVote => client.pre_vote(request).await,
        }
        .map_err(|status| self.failed(status))?;
        convert::vote_response_from(response.into_inner()).map_err(malformed)
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
        self.ask_vote(rpc, option, Ballot::Vote).await
    }

    /// An unreachable peer is an error, never a grant: a replica cut off from the others must
    /// not count their pre-votes and raise its term.
    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.ask_vote(rpc, option, Ballot::PreVote).await
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
