//! The other brokers as this one reaches them: their internal addresses, the tonic channels to
//! them and the one session per broker those channels run over ([`super::session`]).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint};

use super::session::{self, Hello, Origin, Sessions, Substream};
use crate::types::NodeId;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// One channel per broker, shared by every partition group, the membership's gossip,
/// forwarded commands, commands between partitions and job streams, all over the one session
/// (TCP connection) with that broker, whichever side dialled it; and the brokers' internal
/// addresses as this broker knows them. A group's membership names brokers by id only: where
/// a broker is reached is this broker's own knowledge (what the membership learns from the
/// broker itself), so two brokers may reach a third by different routes.
#[derive(Clone)]
pub struct Peers {
    inner: Arc<Inner>,
}

struct Inner {
    sessions: Arc<Sessions>,
    addresses: Mutex<HashMap<NodeId, String>>,
    /// The channels, by internal address: one per broker, whichever side needs it first.
    channels: Mutex<HashMap<String, Channel>>,
    /// Who answered the hello at an address this broker dialled.
    reached: Mutex<HashMap<String, NodeId>>,
    /// One dial at a time per address: calls waiting for a session share it.
    dialling: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Peers {
    /// The peers of broker `node`, in this start of it (its incarnation, ordered by start
    /// time: see [`crate::Membership`]).
    pub fn new(node: NodeId) -> Self {
        Self::with_addresses(node, [])
    }

    /// The peers of broker `node`, at these internal addresses (`host:port`), by node id.
    pub fn with_addresses(
        node: NodeId,
        addresses: impl IntoIterator<Item = (NodeId, String)>,
    ) -> Self {
        let local = Hello {
            node,
            incarnation: incarnation(),
        };
        Self {
            inner: Arc::new(Inner {
                sessions: Sessions::new(local),
                addresses: Mutex::new(addresses.into_iter().collect()),
                channels: Mutex::default(),
                reached: Mutex::default(),
                dialling: Mutex::default(),
            }),
        }
    }

    /// This broker's node id.
    pub fn local(&self) -> NodeId {
        self.inner.sessions.local().node
    }

    /// This start of this broker: different at every start, growing with the start time.
    pub fn incarnation(&self) -> u64 {
        self.inner.sessions.local().incarnation
    }

    pub(crate) fn sessions(&self) -> &Arc<Sessions> {
        &self.inner.sessions
    }

    /// The internal API's TCP connections open now, by peer and who dialled: one per peer
    /// once the sessions settle.
    pub fn connections(&self) -> Vec<(NodeId, Origin)> {
        self.inner.sessions.connections()
    }

    /// The channel to the broker whose internal API is at `addr`, made on first use. It
    /// connects lazily, and again after a failure, over the session with that broker.
    pub fn channel_to(&self, addr: &str) -> Result<Channel, String> {
        let mut channels = lock(&self.inner.channels);
        if let Some(channel) = channels.get(addr) {
            return Ok(channel.clone());
        }
        let connector = Connector {
            peers: Arc::downgrade(&self.inner),
            addr: addr.into(),
        };
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| format!("'{addr}': {e}"))?
            .http2_adaptive_window(true)
            .http2_keep_alive_interval(session::KEEPALIVE)
            .keep_alive_timeout(session::SILENCE)
            .keep_alive_while_idle(true)
            .connect_timeout(CONNECT_TIMEOUT)
            .connect_with_connector_lazy(connector);
        channels.insert(addr.to_string(), channel.clone());
        Ok(channel)
    }

    /// How long nothing was heard from broker `node` on the session with it, if there is one.
    pub fn silence(&self, node: NodeId) -> Option<Duration> {
        self.inner.sessions.silence(node)
    }

    /// Broker `node` is (now) reached at `addr`.
    pub fn set_address(&self, node: NodeId, addr: String) {
        lock(&self.inner.addresses).insert(node, addr);
    }

    /// Where broker `node` is reached, once known.
    pub fn address(&self, node: NodeId) -> Option<String> {
        lock(&self.inner.addresses).get(&node).cloned()
    }

    /// The broker that answered at `addr`, or that is reached there.
    pub fn node_at(&self, addr: &str) -> Option<NodeId> {
        self.inner.node_at(addr)
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

    /// Drops what is kept for broker `node` (gossip forgot it): its address, its channels
    /// and its session.
    pub fn forget(&self, node: NodeId) {
        let mut addresses = Vec::new();
        addresses.extend(lock(&self.inner.addresses).remove(&node));
        lock(&self.inner.reached).retain(|addr, n| {
            if *n == node {
                addresses.push(addr.clone());
            }
            *n != node
        });
        for addr in addresses {
            self.forget_address(&addr);
        }
        self.inner.sessions.close(node);
    }

    /// Drops the channel to `addr` (an address no broker answers at any more).
    pub fn forget_address(&self, addr: &str) {
        lock(&self.inner.channels).remove(addr);
        lock(&self.inner.reached).remove(addr);
        lock(&self.inner.dialling).remove(addr);
    }

    /// Closes every session: this broker stops.
    pub fn stop(&self) {
        self.inner.sessions.stop();
        lock(&self.inner.channels).clear();
    }
}

impl Inner {
    /// A substream to the broker at `addr`: on the session with it, dialled if there is none.
    async fn substream(&self, addr: &str) -> Result<Substream, String> {
        if let Some(substream) = self.on_session(addr).await {
            return Ok(substream);
        }
        let dialling = lock(&self.dialling)
            .entry(addr.to_string())
            .or_default()
            .clone();
        let _dialling = dialling.lock().await;
        // A call that waited for another's dial uses its session.
        if let Some(substream) = self.on_session(addr).await {
            return Ok(substream);
        }
        let (peer, substream) = self.sessions.dial(addr, CONNECT_TIMEOUT).await;
        if let Some(peer) = peer {
            // Itself too: the membership then knows the address for its own.
            lock(&self.reached).insert(addr.to_string(), peer.node);
        }
        substream
    }

    fn node_at(&self, addr: &str) -> Option<NodeId> {
        if let Some(node) = lock(&self.reached).get(addr) {
            return Some(*node);
        }
        lock(&self.addresses)
            .iter()
            .find(|(_, a)| *a == addr)
            .map(|(node, _)| *node)
    }

    /// A substream on the session with the broker at `addr`, if there is one that opens it
    /// (one closing as it is asked is passed over: the caller dials).
    async fn on_session(&self, addr: &str) -> Option<Substream> {
        let node = self.node_at(addr)?;
        self.sessions.open(node).await?.ok()
    }
}

/// Makes the tonic connection of a channel: a substream to the broker at `addr`.
#[derive(Clone)]
struct Connector {
    /// Weak: the channels this makes are kept in [`Peers`] itself.
    peers: Weak<Inner>,
    addr: Arc<str>,
}

impl tower_service::Service<tonic::codegen::http::Uri> for Connector {
    type Response = TokioIo<Substream>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _uri: tonic::codegen::http::Uri) -> Self::Future {
        let peers = self.peers.clone();
        let addr = self.addr.clone();
        Box::pin(async move {
            let peers = peers
                .upgrade()
                .ok_or_else(|| std::io::Error::other("this broker is stopping"))?;
            peers
                .substream(&addr)
                .await
                .map(TokioIo::new)
                .map_err(std::io::Error::other)
        })
    }
}

/// Different at every start of a broker and growing with the start time (microseconds since
/// the epoch, then the process id's low byte), so that a restarted broker's info and session
/// replace its old one's and never the other way round, and two brokers given one node id
/// are told apart.
fn incarnation() -> u64 {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    (micros << 8) | u64::from(std::process::id() & 0xff)
}
