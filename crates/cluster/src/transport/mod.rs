//! The internal transport: Raft messages between brokers over tonic on the internal port.
//!
//! One HTTP/2 connection per pair of brokers carries every partition group's messages
//! ([`Peers`] keeps one channel per broker, shared by all the groups that talk to it); each
//! message names its partition, and the receiving broker's [`InternalServer`] hands it to that
//! partition's Raft group ([`Groups`]).

mod client;
pub mod convert;
mod server;

pub use client::{GroupNetwork, GroupNetworkFactory, Peers};
pub use server::{BrokerServices, Executor, Groups, InternalServer};

/// The generated messages and service of `proto/internal.proto`.
#[allow(clippy::all, missing_docs, unreachable_pub)]
pub mod proto {
    tonic::include_proto!("beeline.internal.v1");
}

/// A partition's Raft group on this broker.
pub type PartitionRaft = openraft::Raft<crate::TypeConfig, crate::CommitNotifier>;
