//! The internal transport: Raft messages between brokers over tonic on the internal port.
//!
//! One TCP connection per pair of brokers carries everything either side sends the other
//! ([`session`]: a yamux session, whichever side dialled it). The calls that carry the steady
//! traffic (a partition's replication to each follower, forwarded commands, job streams) are
//! direct ([`direct`]): each on a substream of its own, protobuf messages without HTTP/2.
//! Every other call (votes, snapshots, gossip, commands between partitions, hand-overs) goes
//! through each side's tonic client (one channel per broker in [`Peers`]), which runs over a
//! substream it opens. The other side's [`InternalServer`] serves both. Each message names its
//! partition, and the receiving broker hands it to that partition's Raft group ([`Groups`]).

mod client;
pub mod convert;
pub mod direct;
mod peers;
mod server;
pub mod session;
pub mod snapshot;
mod wire;

pub use client::{GroupNetwork, GroupNetworkFactory};
pub use peers::{Link, Peers};
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
/// dial, and serves `server` on every substream a peer opens, on those sessions and on the
/// ones `peers` dialled: a direct call ([`direct`]) or a tonic connection, told apart by the
/// substream's first byte. At shutdown every session of `peers` closes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: InternalServer,
    peers: Peers,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let mut incoming = peers
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
    let (connections, tonic_incoming) = tokio::sync::mpsc::channel(64);
    let handler = std::sync::Arc::new(server.clone());
    let sort = async move {
        while let Some(substream) = incoming.recv().await {
            let (handler, connections) = (handler.clone(), connections.clone());
            tokio::spawn(async move { sort_substream(substream, &handler, connections).await });
        }
    };
    let tonic_incoming = tokio_stream::wrappers::ReceiverStream::new(tonic_incoming)
        .map(Ok::<_, std::convert::Infallible>);
    let stopping = peers.clone();
    let server = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(session::KEEPALIVE))
        .http2_keepalive_timeout(Some(session::SILENCE))
        .add_service(server.tonic())
        .serve_with_incoming_shutdown(tonic_incoming, async move {
            shutdown.await;
            stopping.stop();
        });
    tokio::select! {
        served = server => served.map_err(|e| e.to_string()),
        () = accept => Ok(()),
        () = sort => Ok(()),
    }
}

/// Answers the direct call a peer opened `substream` for, or hands it to the tonic server;
/// one whose first byte does not come within [`session::SILENCE`] is dropped.
async fn sort_substream(
    mut substream: session::Substream,
    handler: &InternalServer,
    connections: tokio::sync::mpsc::Sender<session::Substream>,
) {
    match tokio::time::timeout(session::SILENCE, substream.peek()).await {
        Ok(Ok(direct::CALL)) => direct::answer(handler, substream).await,
        Ok(Ok(_)) => {
            if connections.send(substream).await.is_err() {
                tracing::debug!("a peer's substream dropped: the internal server is gone");
            }
        }
        Ok(Err(_)) | Err(_) => {}
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
