//! A session's TCP connection as yamux sees it: reads buffered, writes gathered until the
//! session's driver has nothing more to send.
//!
//! yamux writes a frame's header and its body with one `poll_write` each and flushes after
//! every frame, and reads a header and then its body with one `poll_read` each; on a bare
//! socket (no Nagle: `TCP_NODELAY`) that is two `send`s and two `recv`s per frame, and an
//! AppendEntries call and its answer are several frames (HTTP/2's data, headers and window
//! updates, yamux's own window updates). Here a read takes whatever has arrived into a buffer
//! ([`READ_BUFFER`]) and yamux's reads are served from it; a write goes into a buffer, and a
//! flush does nothing: the driver, after each turn of polling the session (when yamux has
//! queued every frame it has), sends the buffer with [`Outgoing::poll_send`]. So a turn's
//! frames leave in one `send`, and a burst of frames that arrived together is read with one
//! `recv`. The buffer is sent early when it reaches [`WRITE_BUFFER`]; a full socket makes
//! writes wait (yamux's backpressure), and closing sends what is gathered first.
//!
//! The time of the last read of at least one byte is kept for the session's silence
//! watchdog.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Bytes one `recv` may take at once.
pub const READ_BUFFER: usize = 64 * 1024;
/// Bytes gathered before they are sent without waiting for the end of the driver's turn.
pub const WRITE_BUFFER: usize = 64 * 1024;

/// The socket yamux reads and writes.
pub struct Wire {
    read: OwnedReadHalf,
    buffer: Box<[u8]>,
    /// `buffer[start..end]` is read and not yet handed to yamux.
    start: usize,
    end: usize,
    outgoing: Outgoing,
    started: Instant,
    /// Milliseconds from `started` to the last read of at least one byte.
    last_read: Arc<AtomicU64>,
}

/// What is gathered to be sent, shared by the [`Wire`] (yamux writes into it) and the
/// session's driver (which sends it at the end of each turn).
#[derive(Clone)]
pub struct Outgoing(Arc<Mutex<Gathered>>);

struct Gathered {
    write: OwnedWriteHalf,
    bytes: Vec<u8>,
    /// `bytes[..sent]` went out already.
    sent: usize,
}

impl Wire {
    /// Wraps `socket`; `last_read` gets the milliseconds from `started` at each read.
    pub fn new(socket: TcpStream, started: Instant, last_read: Arc<AtomicU64>) -> (Self, Outgoing) {
        let (read, write) = socket.into_split();
        let outgoing = Outgoing(Arc::new(Mutex::new(Gathered {
            write,
            bytes: Vec::with_capacity(WRITE_BUFFER),
            sent: 0,
        })));
        let wire = Self {
            read,
            buffer: vec![0; READ_BUFFER].into_boxed_slice(),
            start: 0,
            end: 0,
            outgoing: outgoing.clone(),
            started,
            last_read,
        };
        (wire, outgoing)
    }

    fn heard(&self) {
        let now = self.started.elapsed().as_millis() as u64;
        self.last_read.store(now, Ordering::Relaxed);
    }
}

impl Outgoing {
    fn gathered(&self) -> MutexGuard<'_, Gathered> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends everything gathered; `Pending` while the socket takes no more (the task is
    /// woken when it does).
    pub fn poll_send(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.gathered().poll_send(cx)
    }

    /// Bytes gathered and not yet sent.
    #[cfg(test)]
    fn pending(&self) -> usize {
        let gathered = self.gathered();
        gathered.bytes.len() - gathered.sent
    }
}

impl Gathered {
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.bytes.len() {
            let n = ready!(Pin::new(&mut self.write).poll_write(cx, &self.bytes[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.bytes.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Wire {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.start == this.end {
            if buf.remaining() >= this.buffer.len() {
                // A read as large as the buffer goes straight into the caller's.
                let before = buf.filled().len();
                ready!(Pin::new(&mut this.read).poll_read(cx, buf))?;
                if buf.filled().len() > before {
                    this.heard();
                }
                return Poll::Ready(Ok(()));
            }
            let mut into = ReadBuf::new(&mut this.buffer);
            ready!(Pin::new(&mut this.read).poll_read(cx, &mut into))?;
            let n = into.filled().len();
            if n == 0 {
                // The peer closed its side: yamux sees the end.
                return Poll::Ready(Ok(()));
            }
            (this.start, this.end) = (0, n);
            this.heard();
        }
        let n = buf.remaining().min(this.end - this.start);
        buf.put_slice(&this.buffer[this.start..this.start + n]);
        this.start += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Wire {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut gathered = self.outgoing.gathered();
        if gathered.bytes.len() + buf.len() > WRITE_BUFFER && gathered.sent < gathered.bytes.len() {
            ready!(gathered.poll_send(cx))?;
        }
        gathered.bytes.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    /// Nothing: the driver sends what is gathered at the end of its turn.
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut gathered = self.outgoing.gathered();
        ready!(gathered.poll_send(cx))?;
        Pin::new(&mut gathered.write).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (dialled, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        (dialled.unwrap(), accepted.unwrap().0)
    }

    #[tokio::test]
    async fn writes_wait_for_the_drivers_send_and_leave_together() {
        let (local, mut remote) = pair().await;
        let last_read = Arc::new(AtomicU64::new(0));
        let (mut wire, outgoing) = Wire::new(local, Instant::now(), last_read);
        wire.write_all(b"header").await.unwrap();
        wire.flush().await.unwrap();
        wire.write_all(b"body").await.unwrap();
        assert_eq!(outgoing.pending(), 10, "a flush sends nothing");
        let mut peek = [0u8; 16];
        let nothing =
            tokio::time::timeout(std::time::Duration::from_millis(50), remote.read(&mut peek))
                .await;
        assert!(nothing.is_err(), "nothing sent before the driver's send");
        std::future::poll_fn(|cx| outgoing.poll_send(cx))
            .await
            .unwrap();
        assert_eq!(outgoing.pending(), 0);
        let mut got = [0u8; 10];
        remote.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"headerbody");
    }

    #[tokio::test]
    async fn a_full_buffer_is_sent_without_the_driver_and_shutdown_sends_the_rest() {
        let (local, mut remote) = pair().await;
        let (mut wire, outgoing) = Wire::new(local, Instant::now(), Arc::default());
        let chunk = vec![7u8; 1000];
        let chunks = WRITE_BUFFER / chunk.len() + 3;
        for _ in 0..chunks {
            wire.write_all(&chunk).await.unwrap();
        }
        assert!(
            outgoing.pending() < WRITE_BUFFER,
            "sent once the buffer was full"
        );
        wire.shutdown().await.unwrap();
        let mut got = Vec::new();
        remote.read_to_end(&mut got).await.unwrap();
        assert_eq!(
            got.len(),
            chunks * chunk.len(),
            "everything arrives, then the end"
        );
    }

    #[tokio::test]
    async fn reads_are_served_from_one_receive_and_mark_the_peer_heard() {
        let (local, mut remote) = pair().await;
        let last_read = Arc::new(AtomicU64::new(0));
        let started = Instant::now() - std::time::Duration::from_secs(5);
        let (mut wire, _outgoing) = Wire::new(local, started, last_read.clone());
        remote.write_all(b"0123456789abcdef").await.unwrap();
        let mut header = [0u8; 12];
        wire.read_exact(&mut header).await.unwrap();
        assert_eq!(&header, b"0123456789ab");
        assert!(
            last_read.load(Ordering::Relaxed) >= 5000,
            "the read is recorded"
        );
        // The rest comes from the buffer: the peer closes, yet it is still read first.
        drop(remote);
        let mut rest = Vec::new();
        wire.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"cdef");
    }
}
