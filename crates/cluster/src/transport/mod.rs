//! The internal transport: Raft messages between brokers over tonic on the internal port.
//!
//! One TCP connection per pair of brokers carries everything either side sends the other
//! ([`session`]: a yamux session, whichever side dialled it): each side's tonic client (one
//! channel per broker in [`Peers`], shared by every partition group, gossip, forwarded
//! commands, commands between partitions and job streams) runs over a substream it opens, and
//! the other side's [`InternalServer`] serves it. Each message names its partition, and the
//! receiving broker hands it to that partition's Raft group ([`Groups`]).

mod client;
pub mod convert;
mod peers;
mod server;
pub mod session;
pub mod snapshot;
mod wire;

pub use client::{GroupNetwork, GroupNetworkFactory};
pub use peers::Peers;
pub use server::{BrokerServices, Executor, Groups, InternalServer, InternalService};
use tokio_stream::StreamExt as _;

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

/// Serves the internal API on `listener` until `shutdown`: takes the sessions other brokers
/// dial, and serves `service` on every substream a peer opens, on those sessions and on the
/// ones `peers` dialled. At shutdown every session of `peers` closes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: server::InternalService,
    peers: Peers,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let incoming = peers
        .sessions()
        .incoming()
        .ok_or("the internal API is served once per broker")?;
    // Dropped (the server's task aborted) or ended: every session closes.
    let _stop = StopOnDrop(peers.clone());
    let sessions = peers.sessions().clone();
    let accept = async move {
        loop {
            match listener.accept().await {
                Ok((socket, _)) => {
                    let sessions = sessions.clone();
                    tokio::spawn(async move { sessions.accept(socket).await });
                }
                Err(error) => {
                    tracing::warn!(%error, "the internal port cannot accept");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    };
    let incoming = tokio_stream::wrappers::ReceiverStream::new(incoming)
        .map(Ok::<_, std::convert::Infallible>);
    let stopping = peers.clone();
    let server = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(session::KEEPALIVE))
        .http2_keepalive_timeout(Some(session::SILENCE))
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, async move {
            shutdown.await;
            stopping.stop();
        });
    tokio::select! {
        served = server => served.map_err(|e| e.to_string()),
        () = accept => Ok(()),
    }
}

struct StopOnDrop(Peers);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// A partition's Raft group on this broker.
pub type PartitionRaft = openraft::Raft<crate::TypeConfig, crate::CommitNotifier>;
