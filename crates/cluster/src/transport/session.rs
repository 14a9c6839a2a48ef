//! One TCP connection per pair of brokers: a yamux session over it, on which each side's
//! tonic client runs over one substream it opens and the other side's internal server serves
//! it (as it serves every substream its peers open).
//!
//! A session starts with a hello each way (a magic, the broker's node id and the incarnation
//! of its start), so the side that accepted it knows who dialled and uses the session for its
//! own calls too. Each broker keeps at most one session per peer ([`Sessions`]); when both
//! dialled at once, both keep the one dialled by the lower node id and close the other, and a
//! session with a newer start of the peer replaces one with an older start.
//!
//! A session that goes quiet is dead: the tonic clients send HTTP/2 pings every
//! [`KEEPALIVE`], so a live peer is heard from at least that often, and a session from which
//! nothing was read for [`SILENCE`] is closed. Its calls in flight fail (as unreachable, so
//! Raft retries) and the next call dials again.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{Compat, FuturesAsyncReadCompatExt, TokioAsyncReadCompatExt};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::wire::{Outgoing, Wire};

use crate::types::NodeId;

/// Between two HTTP/2 pings of an idle tonic client on a session.
pub const KEEPALIVE: Duration = Duration::from_secs(1);
/// A session from which nothing was read for this long is closed as dead.
pub const SILENCE: Duration = Duration::from_secs(4);
/// How long the hello may take, each way.
const HELLO_TIMEOUT: Duration = Duration::from_secs(2);
/// Opens a session's first bytes each way; the last byte is the hello's version.
const MAGIC: [u8; 8] = *b"BEELINE\x01";

/// Who is at the other end of a session: what its hello said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    pub node: NodeId,
    pub incarnation: u64,
}

impl Hello {
    fn encode(self) -> [u8; 24] {
        let mut bytes = [0u8; 24];
        bytes[..8].copy_from_slice(&MAGIC);
        bytes[8..16].copy_from_slice(&self.node.to_be_bytes());
        bytes[16..].copy_from_slice(&self.incarnation.to_be_bytes());
        bytes
    }

    /// Sends `self` and reads the other side's hello (both sides send first: neither waits).
    async fn exchange(self, stream: &mut TcpStream) -> std::io::Result<Hello> {
        let exchange = async {
            stream.write_all(&self.encode()).await?;
            let mut bytes = [0u8; 24];
            stream.read_exact(&mut bytes).await?;
            if bytes[..8] != MAGIC {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "not a Beeline broker's internal port (no session hello)",
                ));
            }
            let field = |range: std::ops::Range<usize>| {
                let mut field = [0u8; 8];
                field.copy_from_slice(&bytes[range]);
                u64::from_be_bytes(field)
            };
            Ok(Hello {
                node: field(8..16),
                incarnation: field(16..24),
            })
        };
        tokio::time::timeout(HELLO_TIMEOUT, exchange)
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no session hello"))?
    }
}

/// A substream of a session: one tonic connection (HTTP/2) between two brokers.
pub struct Substream(Compat<yamux::Stream>);

impl AsyncRead for Substream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Substream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for Substream {
    type ConnectInfo = ();

    fn connect_info(&self) {}
}

type Opened = oneshot::Sender<Result<yamux::Stream, yamux::ConnectionError>>;

/// A live session with one peer, as the registry keeps it.
#[derive(Clone)]
struct Session {
    id: u64,
    peer: Hello,
    dialled_by: NodeId,
    opens: mpsc::Sender<Opened>,
    closed: CancellationToken,
    started: Instant,
    /// Milliseconds from `started` to the last read of at least one byte.
    last_read: Arc<AtomicU64>,
}

impl Session {
    /// How long nothing was read from the peer.
    fn silence(&self) -> Duration {
        self.started.elapsed().saturating_sub(Duration::from_millis(
            self.last_read.load(Ordering::Relaxed),
        ))
    }

    async fn open(&self) -> Result<Substream, String> {
        let (opened, stream) = oneshot::channel();
        self.opens
            .send(opened)
            .await
            .map_err(|_| "the session is closed".to_string())?;
        match stream.await {
            Ok(Ok(stream)) => Ok(Substream(stream.compat())),
            Ok(Err(e)) => Err(format!("the session cannot open a substream: {e}")),
            Err(_) => Err("the session is closed".to_string()),
        }
    }
}

/// Which side dialled a session, from this broker's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Dialled,
    Accepted,
}

/// A broker's sessions with its peers: at most one per peer.
pub struct Sessions {
    local: Hello,
    next_id: AtomicU64,
    live: Mutex<HashMap<NodeId, Session>>,
    /// Every session whose driver still runs, by id: the TCP connections open for the
    /// internal API (a superseded session counts until its connection is closed).
    open: Mutex<HashMap<u64, (NodeId, Origin)>>,
    /// Every substream a peer opens, for the internal server.
    incoming: mpsc::Sender<Substream>,
    incoming_rx: Mutex<Option<mpsc::Receiver<Substream>>>,
    /// Set when this broker stops: sessions close, and none is made or taken any more.
    stopped: CancellationToken,
}

impl Sessions {
    pub fn new(local: Hello) -> Arc<Self> {
        let (incoming, incoming_rx) = mpsc::channel(64);
        Arc::new(Self {
            local,
            next_id: AtomicU64::new(0),
            live: Mutex::default(),
            open: Mutex::default(),
            incoming,
            incoming_rx: Mutex::new(Some(incoming_rx)),
            stopped: CancellationToken::new(),
        })
    }

    pub fn local(&self) -> Hello {
        self.local
    }

    /// The substreams peers open, for the internal server: taken once.
    pub fn incoming(&self) -> Option<mpsc::Receiver<Substream>> {
        self.incoming_rx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Opens a substream on the session with `peer`, if there is one.
    pub async fn open(&self, peer: NodeId) -> Option<Result<Substream, String>> {
        let session = self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&peer)
            .filter(|s| !s.closed.is_cancelled())
            .cloned()?;
        Some(session.open().await)
    }

    /// How long nothing was read on the session with `peer`, if there is one: a live peer is
    /// heard from at least every [`KEEPALIVE`].
    pub fn silence(&self, peer: NodeId) -> Option<Duration> {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&peer)
            .filter(|s| !s.closed.is_cancelled())
            .map(Session::silence)
    }

    /// Dials `addr`, exchanges hellos and keeps the session (or the one already kept with
    /// that peer): returns who answered, if anyone did, and a substream on the kept session.
    pub async fn dial(
        self: &Arc<Self>,
        addr: &str,
        connect_timeout: Duration,
    ) -> (Option<Hello>, Result<Substream, String>) {
        if self.stopped.is_cancelled() {
            return (None, Err("this broker is stopping".into()));
        }
        let connected = tokio::time::timeout(connect_timeout, TcpStream::connect(addr)).await;
        let mut socket = match connected {
            Ok(Ok(socket)) => socket,
            Ok(Err(e)) => return (None, Err(format!("{addr}: {e}"))),
            Err(_) => return (None, Err(format!("{addr}: connect timed out"))),
        };
        let _ = socket.set_nodelay(true);
        let peer = match self.local.exchange(&mut socket).await {
            Ok(peer) => peer,
            Err(e) => return (None, Err(format!("{addr}: {e}"))),
        };
        if peer.node == self.local.node {
            let error = if peer.incarnation == self.local.incarnation {
                format!("{addr} is this broker itself")
            } else {
                format!("the broker at {addr} has node id {} too", peer.node)
            };
            return (Some(peer), Err(error));
        }
        let session = self.start(socket, peer, Origin::Dialled);
        (Some(peer), session.open().await)
    }

    /// Takes a connection a peer dialled: hellos, then the session (unless a better one with
    /// that peer is kept).
    pub async fn accept(self: &Arc<Self>, mut socket: TcpStream) {
        if self.stopped.is_cancelled() {
            return;
        }
        let _ = socket.set_nodelay(true);
        let peer = match self.local.exchange(&mut socket).await {
            Ok(peer) => peer,
            Err(error) => {
                tracing::debug!(%error, "an internal connection without a session hello");
                return;
            }
        };
        if peer.node == self.local.node {
            // This broker dialled itself (a contact point that is itself): the dialler learns
            // it from the hello and drops the connection.
            if peer.incarnation != self.local.incarnation {
                tracing::warn!(
                    node = peer.node,
                    "another broker dialled this one with this broker's node id"
                );
            }
            return;
        }
        self.start(socket, peer, Origin::Accepted);
    }

    /// Starts the session's driver and keeps the session unless a better one with the peer
    /// is kept; returns the one kept.
    fn start(self: &Arc<Self>, socket: TcpStream, peer: Hello, origin: Origin) -> Session {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (opens, opens_rx) = mpsc::channel(16);
        let last_read = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let session = Session {
            id,
            peer,
            dialled_by: match origin {
                Origin::Dialled => self.local.node,
                Origin::Accepted => peer.node,
            },
            opens,
            closed: self.stopped.child_token(),
            started,
            last_read: last_read.clone(),
        };
        let (wire, outgoing) = Wire::new(socket, started, last_read.clone());
        let mode = match origin {
            Origin::Dialled => yamux::Mode::Client,
            Origin::Accepted => yamux::Mode::Server,
        };
        let connection = yamux::Connection::new(wire.compat(), config(), mode);
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, (peer.node, origin));
        let kept = self.keep(session.clone());
        tracing::debug!(
            peer = peer.node,
            ?origin,
            kept = kept.id == id,
            "an internal session started"
        );
        let sessions = self.clone();
        let driver = Driver {
            connection,
            outgoing,
            opens: opens_rx,
            incoming: self.incoming.clone(),
            closed: session.closed.clone(),
            started,
            last_read,
        };
        tokio::spawn(async move {
            if let Err(error) = driver.run().await {
                tracing::debug!(peer = peer.node, %error, "an internal session ended");
            }
            sessions.ended(id, peer.node);
        });
        kept
    }

    /// Keeps `new` as the session with its peer, or the one kept already: a newer start of
    /// the peer wins; between two sessions with the same start, the one dialled by the lower
    /// node id (both sides decide alike); between two dialled by the same side, the newer
    /// (that side dialled again: it found the older one dead).
    fn keep(&self, new: Session) -> Session {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let lower = self.local.node.min(new.peer.node);
        let keep_new = match live.get(&new.peer.node) {
            Some(old) if !old.closed.is_cancelled() => {
                if new.peer.incarnation != old.peer.incarnation {
                    new.peer.incarnation > old.peer.incarnation
                } else if new.dialled_by != old.dialled_by {
                    new.dialled_by == lower
                } else {
                    true
                }
            }
            _ => true,
        };
        if keep_new {
            if let Some(old) = live.insert(new.peer.node, new.clone()) {
                old.closed.cancel();
            }
            new
        } else {
            new.closed.cancel();
            live.get(&new.peer.node).cloned().unwrap_or(new)
        }
    }

    fn ended(&self, id: u64, peer: NodeId) {
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live.get(&peer).is_some_and(|s| s.id == id) {
            live.remove(&peer);
        }
    }

    /// Closes the session with `peer` (a broker gossip forgot).
    pub fn close(&self, peer: NodeId) {
        if let Some(session) = self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&peer)
        {
            session.closed.cancel();
        }
    }

    /// Closes every session, and makes and takes no more: this broker stops.
    pub fn stop(&self) {
        self.stopped.cancel();
        self.live.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The TCP connections of the internal API open now, with their peer and who dialled.
    pub fn connections(&self) -> Vec<(NodeId, Origin)> {
        let mut open: Vec<_> = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .copied()
            .collect();
        open.sort_unstable_by_key(|(node, origin)| (*node, *origin == Origin::Accepted));
        open
    }
}

/// Large windows: one session carries every partition's Raft traffic and snapshot chunks.
///
/// Frames of at most 12 KiB: yamux reads each frame's body into a zeroed buffer of its size,
/// and a buffer of 16 KiB (its default) is one of jemalloc's large classes, served from page
/// extents that it zeroes by returning them to the kernel (`madvise`, then a page fault per
/// page on the copy in). 12 KiB is a small class, cut from slabs that stay mapped: the brokers'
/// page faults halved (docs/benchmarks.md, "yamux frames in jemalloc's small classes").
fn config() -> yamux::Config {
    let mut config = yamux::Config::default();
    config.set_max_num_streams(64);
    config.set_max_connection_receive_window(Some(64 * 1024 * 1024));
    config.set_split_send_size(12 * 1024);
    config
}

/// Runs one session: opens the substreams asked for, hands the peer's to the server, and
/// closes it when told to or when the peer is silent for [`SILENCE`].
struct Driver {
    connection: yamux::Connection<Compat<Wire>>,
    /// What yamux wrote this turn, sent at its end.
    outgoing: Outgoing,
    opens: mpsc::Receiver<Opened>,
    incoming: mpsc::Sender<Substream>,
    closed: CancellationToken,
    /// When the connection was made: `last_read` counts from it.
    started: Instant,
    last_read: Arc<AtomicU64>,
}

enum Event {
    Open(Opened),
    Opened(Result<yamux::Stream, yamux::ConnectionError>),
    Inbound(yamux::Stream),
    Ended(Option<String>),
    Check,
    Close,
}

impl Driver {
    /// One look at everything the driver waits for.
    fn poll_event(
        &mut self,
        cx: &mut Context<'_>,
        cancelled: &mut Pin<&mut WaitForCancellationFuture<'_>>,
        waiting: &VecDeque<Opened>,
        check: &mut tokio::time::Interval,
    ) -> Poll<Event> {
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Event::Close);
        }
        if let Poll::Ready(Some(opened)) = self.opens.poll_recv(cx) {
            return Poll::Ready(Event::Open(opened));
        }
        if !waiting.is_empty()
            && let Poll::Ready(stream) = self.connection.poll_new_outbound(cx)
        {
            return Poll::Ready(Event::Opened(stream));
        }
        match self.connection.poll_next_inbound(cx) {
            Poll::Ready(Some(Ok(stream))) => return Poll::Ready(Event::Inbound(stream)),
            Poll::Ready(Some(Err(e))) => {
                return Poll::Ready(Event::Ended(Some(e.to_string())));
            }
            Poll::Ready(None) => return Poll::Ready(Event::Ended(None)),
            Poll::Pending => {}
        }
        if check.poll_tick(cx).is_ready() {
            return Poll::Ready(Event::Check);
        }
        Poll::Pending
    }

    async fn run(mut self) -> Result<(), String> {
        let mut waiting: VecDeque<Opened> = VecDeque::new();
        let mut check = tokio::time::interval(KEEPALIVE);
        let started = self.started;
        let closed = self.closed.clone();
        let mut cancelled = std::pin::pin!(closed.cancelled());
        let end = loop {
            let event = std::future::poll_fn(|cx| {
                let event = self.poll_event(cx, &mut cancelled, &waiting, &mut check);
                // The turn's frames leave together (see `wire`).
                match self.outgoing.poll_send(cx) {
                    Poll::Ready(Err(e)) => Poll::Ready(Event::Ended(Some(e.to_string()))),
                    Poll::Ready(Ok(())) | Poll::Pending => event,
                }
            })
            .await;
            match event {
                Event::Open(opened) => waiting.push_back(opened),
                Event::Opened(stream) => {
                    if let Some(opened) = waiting.pop_front() {
                        // A caller that gave up drops the stream: it closes.
                        let _ = opened.send(stream);
                    }
                }
                Event::Inbound(stream) => {
                    if self.incoming.try_send(Substream(stream.compat())).is_err() {
                        tracing::debug!(
                            "a peer's substream dropped: the internal server is busy or gone"
                        );
                    }
                }
                Event::Ended(error) => break error,
                Event::Check => {
                    let last = Duration::from_millis(self.last_read.load(Ordering::Relaxed));
                    if started.elapsed().saturating_sub(last) > SILENCE {
                        break Some(format!(
                            "nothing heard from the peer for {} s: the session is dead",
                            SILENCE.as_secs()
                        ));
                    }
                }
                Event::Close => break None,
            }
        };
        self.closed.cancel();
        // Tells the peer (a GoAway) when it can still hear; a dead peer is not waited for.
        let close = std::future::poll_fn(|cx| self.connection.poll_close(cx));
        let _ = tokio::time::timeout(Duration::from_secs(1), close).await;
        end.map_or(Ok(()), Err)
    }
}
