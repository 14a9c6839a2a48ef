//! The internal transport: Raft messages between brokers over tonic on the internal port.
//!
//! One HTTP/2 connection per pair of brokers carries every partition group's messages
//! ([`Peers`] keeps one channel per broker, shared by all the groups that talk to it); each
//! message names its partition, and the receiving broker's [`InternalServer`] hands it to that
//! partition's Raft group ([`Groups`]).

mod client;
pub mod convert;
mod server;
pub mod snapshot;

pub use client::{GroupNetwork, GroupNetworkFactory, Peers};
pub use server::{BrokerServices, Executor, Groups, InternalServer};

/// A vote request, or a pre-vote: whether the vote would be granted, asked without changing
/// any term or vote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ballot {
    Vote,
    PreVote,
}

/// The generated messages and service of `proto/internal.proto`.
#[allow(clippy::all, missing_docs, unreachable_pub)]
pub mod proto {
    tonic::include_proto!("beeline.internal.v1");
}

/// Serves the internal API on `listener`: every group in `groups`, as they are added.
pub async fn serve(listener: tokio::net::TcpListener, groups: Groups) -> Result<(), String> {
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tonic::transport::Server::builder()
        .add_service(InternalServer::service(groups))
        .serve_with_incoming(incoming)
        .await
        .map_err(|e| e.to_string())
}

/// A partition's Raft group on this broker.
pub type PartitionRaft = openraft::Raft<crate::TypeConfig, crate::CommitNotifier>;
