//! One TCP connection per pair of brokers: a yamux session over it, on which each side's
//! tonic client runs over one substream it opens and the other side's internal server serves
//! it (as it serves every substream its peers open).
//!
//! A session starts with a hello each way (a magic, the broker's node id and the incarnation
//! of its start), so the side that accepted it knows who dialled and uses the session for its
//! own calls too. Each broker keeps at most one session per peer ([`Sessions`]), and of the
//! two brokers of a pair the one with the lower node id decides which: after the hellos it
//! sends a verdict, keep or refuse, and the other side uses no connection before it has the
//! verdict. So when both dialled at once, the lower broker keeps whichever connection it
//! decided on first and refuses the other before anything runs on it, and the higher broker,
//! refused, waits (at most [`HELLO_TIMEOUT`]) for the kept one: a session in use is not
//! closed to settle who dialled. A session with a newer start of the peer replaces one with
//! an older start; a peer that dials again where it dialled before replaces its session only
//! when nothing was heard on that for [`REDIAL_SILENCE`] (it found it dead; else it reached
//! this broker by a second address, and is refused).
//!
//! The handshake's version is the magic's last byte: brokers of different handshake versions
//! refuse each other's connections (a cluster is upgraded as a whole).
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
/// A peer that dials again while its session is kept found it dead, if nothing was heard on it
/// for this long (a live peer's pings come every [`KEEPALIVE`]); else it reached this broker
/// by a second address and is refused, to use the session kept.
const REDIAL_SILENCE: Duration = Duration::from_secs(2);
/// Opens a session's first bytes each way; the last byte is the handshake's version.
const MAGIC: [u8; 8] = *b"BEELINE\x02";
/// The lower broker's verdict on a connection, the byte after its hello.
const KEEP: u8 = 1;
const REFUSE: u8 = 0;

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
            if bytes[..7] != MAGIC[..7] {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "not a Beeline broker's internal port (no session hello)",
                ));
            }
            if bytes[7] != MAGIC[7] {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the broker speaks version {} of the internal handshake, this one {}: \
                         brokers of one cluster run one Beeline version",
                        bytes[7], MAGIC[7]
                    ),
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
    /// Counts the sessions kept: a broker refused a connection waits for the one kept.
    kept: tokio::sync::watch::Sender<u64>,
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
            kept: tokio::sync::watch::Sender::new(0),
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

    /// Dials `addr`, exchanges hellos and settles the connection with the broker that
    /// answers: returns who answered, if anyone did, and a substream on the session kept with
    /// it (this connection's, or the one kept instead of it).
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
        // Settled on a task of its own: a caller that gives up (tonic's connect timeout) does
        // not leave a session kept by the verdict but never run.
        let sessions = self.clone();
        let settled =
            tokio::spawn(async move { sessions.settle(socket, peer, Origin::Dialled).await }).await;
        let substream = match settled {
            Ok(Ok(Some(session))) => session.open().await,
            Ok(Ok(None)) => self.kept_instead(peer).await,
            Ok(Err(e)) => Err(format!("{addr}: {e}")),
            Err(e) => Err(format!("{addr}: the handshake's task ended: {e}")),
        };
        (Some(peer), substream)
    }

    /// Takes a connection a peer dialled: hellos, then the session, if it is the one kept.
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
        if let Err(error) = self.settle(socket, peer, Origin::Accepted).await {
            tracing::debug!(peer = peer.node, %error, "an internal connection not settled");
        }
    }

    /// Settles a connection with `peer` after the hellos: of the two brokers the one with the
    /// lower node id decides whether it becomes their session and sends its verdict; the
    /// other reads it and does as told. The session when it is kept, `None` when refused (a
    /// session with the peer is kept instead, or is being settled).
    async fn settle(
        self: &Arc<Self>,
        mut socket: TcpStream,
        peer: Hello,
        origin: Origin,
    ) -> std::io::Result<Option<Session>> {
        let (session, opens) = self.session(peer, origin);
        if self.local.node < peer.node {
            let kept = self.decide(&session);
            let verdict = if kept { KEEP } else { REFUSE };
            if let Err(e) = socket.write_all(&[verdict]).await {
                if kept {
                    session.closed.cancel();
                    self.ended(session.id, peer.node);
                }
                return Err(e);
            }
            if !kept {
                return Ok(None);
            }
        } else {
            let verdict = tokio::time::timeout(HELLO_TIMEOUT, socket.read_u8())
                .await
                .map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::TimedOut, "no verdict after the hello")
                })??;
            if verdict != KEEP || !self.apply(&session) {
                return Ok(None);
            }
        }
        self.run(&session, opens, socket, origin);
        Ok(Some(session))
    }

    /// A new session with `peer`, not yet kept or running.
    fn session(&self, peer: Hello, origin: Origin) -> (Session, mpsc::Receiver<Opened>) {
        let (opens, opens_rx) = mpsc::channel(16);
        let session = Session {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            peer,
            dialled_by: match origin {
                Origin::Dialled => self.local.node,
                Origin::Accepted => peer.node,
            },
            opens,
            closed: self.stopped.child_token(),
            started: Instant::now(),
            last_read: Arc::new(AtomicU64::new(0)),
        };
        (session, opens_rx)
    }

    /// The deciding (lower) broker's verdict on `new`, kept at once when it is kept. Kept:
    /// the first session with the peer; one with a newer start of the peer, which replaces the
    /// older; one the peer dialled where it dialled the one kept before and nothing was heard
    /// on that for [`REDIAL_SILENCE`] (the peer found it dead: the new one replaces it).
    /// Refused: any other while a session is kept (the peer uses the one kept), so a session
    /// heard from is not closed for one that came after it.
    fn decide(&self, new: &Session) -> bool {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let keep = match live.get(&new.peer.node) {
            Some(old) if !old.closed.is_cancelled() => {
                if new.peer.incarnation != old.peer.incarnation {
                    new.peer.incarnation > old.peer.incarnation
                } else {
                    new.dialled_by == new.peer.node
                        && old.dialled_by == new.peer.node
                        && old.silence() > REDIAL_SILENCE
                }
            }
            _ => true,
        };
        if keep {
            self.keep(&mut live, new);
        }
        keep
    }

    /// Keeps `new`, which the lower broker kept, unless a session with a newer start of the
    /// peer is kept: whatever was kept before is closed, as the lower broker closed it.
    fn apply(&self, new: &Session) -> bool {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let newer_kept = live.get(&new.peer.node).is_some_and(|old| {
            !old.closed.is_cancelled() && old.peer.incarnation > new.peer.incarnation
        });
        if !newer_kept {
            self.keep(&mut live, new);
        }
        !newer_kept
    }

    fn keep(&self, live: &mut HashMap<NodeId, Session>, new: &Session) {
        if let Some(old) = live.insert(new.peer.node, new.clone()) {
            old.closed.cancel();
        }
        self.kept.send_modify(|kept| *kept += 1);
    }

    /// A substream on the session kept with `peer` instead of a connection refused: the one
    /// kept, or the one the lower broker is settling (its verdict is on its way), waited for
    /// as long as a hello may take.
    async fn kept_instead(&self, peer: Hello) -> Result<Substream, String> {
        let mut kept = self.kept.subscribe();
        let wait = async {
            loop {
                if let Some(opened) = self.open(peer.node).await {
                    return opened;
                }
                // The sender lives as long as `self`: `changed` does not fail here.
                let _ = kept.changed().await;
            }
        };
        tokio::select! {
            waited = tokio::time::timeout(HELLO_TIMEOUT, wait) => waited.unwrap_or_else(|_| {
                Err(format!(
                    "broker {} kept another connection with this one, which did not come",
                    peer.node
                ))
            }),
            () = self.stopped.cancelled() => Err("this broker is stopping".to_string()),
        }
    }

    /// Runs the kept `session` over `socket`: its driver, until the session closes.
    fn run(
        self: &Arc<Self>,
        session: &Session,
        opens: mpsc::Receiver<Opened>,
        socket: TcpStream,
        origin: Origin,
    ) {
        let peer = session.peer;
        let (id, started, last_read) = (session.id, session.started, session.last_read.clone());
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
        tracing::debug!(peer = peer.node, ?origin, "an internal session started");
        let sessions = self.clone();
        let driver = Driver {
            connection,
            outgoing,
            opens,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A broker's sessions on a listener of its own, echoing back what arrives on every
    /// substream a peer opens.
    async fn broker(node: NodeId) -> (Arc<Sessions>, String) {
        let sessions = Sessions::new(Hello {
            node,
            incarnation: 1,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listener");
        let addr = listener.local_addr().expect("address").to_string();
        let accepting = sessions.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let sessions = accepting.clone();
                tokio::spawn(async move { sessions.accept(socket).await });
            }
        });
        let mut incoming = sessions.incoming().expect("incoming");
        tokio::spawn(async move {
            while let Some(substream) = incoming.recv().await {
                tokio::spawn(async move {
                    let (mut read, mut write) = tokio::io::split(substream);
                    let _ = tokio::io::copy(&mut read, &mut write).await;
                });
            }
        });
        (sessions, addr)
    }

    async fn echoes(substream: &mut Substream, what: &[u8]) -> std::io::Result<()> {
        substream.write_all(what).await?;
        substream.flush().await?;
        let mut back = vec![0u8; what.len()];
        tokio::time::timeout(Duration::from_secs(2), substream.read_exact(&mut back))
            .await
            .map_err(|_| std::io::Error::other("no echo"))??;
        assert_eq!(back, what);
        Ok(())
    }

    /// Two brokers dial each other at the same time, over and over: each ends with one
    /// session, on one connection, and the substreams both opened at once stay open (the
    /// lower broker refused one connection before anything ran on it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn brokers_dialling_each_other_at_once_keep_one_session_and_lose_no_substream() {
        for round in 0..40 {
            let (lower, lower_addr) = broker(1).await;
            let (higher, higher_addr) = broker(2).await;
            let ((_, from_lower), (_, from_higher)) = tokio::join!(
                lower.dial(&higher_addr, Duration::from_secs(2)),
                higher.dial(&lower_addr, Duration::from_secs(2)),
            );
            let mut from_lower = from_lower.expect("the lower broker's dial gives a substream");
            let mut from_higher = from_higher.expect("the higher broker's dial gives a substream");
            for attempt in 0..3 {
                let what = format!("round {round}, attempt {attempt}");
                echoes(&mut from_lower, what.as_bytes())
                    .await
                    .unwrap_or_else(|e| panic!("{what}: the lower broker's substream: {e}"));
                echoes(&mut from_higher, what.as_bytes())
                    .await
                    .unwrap_or_else(|e| panic!("{what}: the higher broker's substream: {e}"));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert_eq!(lower.connections().len(), 1, "round {round}");
            assert_eq!(higher.connections().len(), 1, "round {round}");
            let (_, lower_origin) = lower.connections()[0];
            let (_, higher_origin) = higher.connections()[0];
            assert_ne!(lower_origin, higher_origin, "both ends agree who dialled");
            lower.stop();
            higher.stop();
        }
    }

    /// A broker reached by a second address (a contact point's name beside the address it
    /// gives itself) is dialled again while its session runs: the dial gets a substream on the
    /// session kept, and the substream already open on it goes on, whichever side dials.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_address_of_a_broker_leads_to_the_session_kept() {
        let (lower, lower_addr) = broker(1).await;
        let (higher, higher_addr) = broker(2).await;
        let alias = |addr: &str| addr.replace("127.0.0.1", "localhost");
        let (_, first) = higher.dial(&lower_addr, Duration::from_secs(2)).await;
        let mut first = first.expect("a substream");
        echoes(&mut first, b"first").await.expect("echoed");
        for (dialler, addr) in [(&higher, alias(&lower_addr)), (&lower, alias(&higher_addr))] {
            let (peer, again) = dialler.dial(&addr, Duration::from_secs(2)).await;
            assert!(peer.is_some(), "{addr} answers");
            let mut again = again.expect("a substream on the session kept");
            echoes(&mut again, b"again").await.expect("echoed");
            echoes(&mut first, b"first, still").await.expect("echoed");
            assert_eq!(lower.connections().len(), 1);
            assert_eq!(higher.connections().len(), 1);
        }
        lower.stop();
        higher.stop();
    }
}
