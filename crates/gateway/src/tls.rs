//! TLS for both APIs, one way: a certificate chain and a private key (PEM files) make a rustls
//! server configuration, and [`TlsIncoming`] turns a TCP listener into a stream of
//! TLS connections that the gRPC server (tonic) and the REST server (axum) serve as they serve
//! plain TCP. Handshakes run beside the accept loop, each bounded in time, so a client that
//! stalls its handshake holds up nobody.
//!
//! ALPN offers `h2` on the gRPC port (gRPC clients insist on it) and `h2` and `http/1.1` on the
//! REST port.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The certificate and key of the gateway's TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// The server's certificate chain, PEM: the server's certificate first, then the
    /// intermediates.
    pub certificate: PathBuf,
    /// Its private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub private_key: PathBuf,
}

/// TLS could not be set up; says which file and why.
#[derive(Debug, thiserror::Error)]
#[error("TLS: {0}")]
pub struct TlsError(String);

/// How long a client may take for its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Handshaken connections waiting for the server to take them.
const BACKLOG: usize = 128;

/// Which protocols a port offers in ALPN.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Alpn {
    Grpc,
    Rest,
}

impl TlsConfig {
    /// The rustls configuration for a port; an error names the file and what is wrong.
    pub(crate) fn server_config(&self, alpn: Alpn) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let chain = certificates(&self.certificate)?;
        let key = private_key(&self.private_key)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError(format!("no TLS protocol version: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| {
                TlsError(format!(
                    "the key {} does not fit the certificate {}: {e}",
                    self.private_key.display(),
                    self.certificate.display()
                ))
            })?;
        config.alpn_protocols = match alpn {
            Alpn::Grpc => vec![b"h2".to_vec()],
            Alpn::Rest => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        };
        Ok(Arc::new(config))
    }

    /// Reads both files now, so that a wrong setting stops the node at its start.
    pub fn check(&self) -> Result<(), TlsError> {
        self.server_config(Alpn::Rest).map(drop)
    }
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let unreadable = |e: &dyn std::fmt::Display| {
        TlsError(format!(
            "cannot read the certificate chain {}: {e}",
            path.display()
        ))
    };
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(|e| unreadable(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(&e))?;
    if chain.is_empty() {
        return Err(TlsError(format!(
            "{} holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)",
            path.display()
        )));
    }
    Ok(chain)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| {
        TlsError(format!(
            "cannot read a private key from {} (expected PEM: PKCS#8, PKCS#1 or SEC1): {e}",
            path.display()
        ))
    })
}

/// TLS connections accepted on a listener, handshakes done.
pub(crate) struct TlsIncoming {
    connections: mpsc::Receiver<TlsConnection>,
    local_addr: std::net::SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsIncoming {
    pub(crate) fn new(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> Self {
        let local_addr = listener
            .local_addr()
            .unwrap_or_else(|_| std::net::SocketAddr::from(([0, 0, 0, 0], 0)));
        let acceptor = TlsAcceptor::from(config);
        let (tx, connections) = mpsc::channel(BACKLOG);
        let accepting = tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors and the like: wait a little, as hyper does.
                        tracing::warn!(%error, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(stream)) => {
                            let _ = tx.send(TlsConnection { stream, peer }).await;
                        }
                        Ok(Err(error)) => {
                            tracing::debug!(%peer, %error, "a TLS handshake failed")
                        }
                        Err(_) => tracing::debug!(%peer, "a TLS handshake timed out"),
                    }
                });
            }
        });
        Self {
            connections,
            local_addr,
            accepting,
        }
    }
}

impl Drop for TlsIncoming {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl tokio_stream::Stream for TlsIncoming {
    type Item = io::Result<TlsConnection>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.connections.poll_recv(cx).map(|c| c.map(Ok))
    }
}

impl axum::serve::Listener for TlsIncoming {
    type Io = TlsConnection;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.connections.recv().await {
            Some(connection) => {
                let peer = connection.peer;
                (connection, peer)
            }
            // The accept loop ended (it never does by itself): nothing more will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local_addr)
    }
}

/// One TLS connection, handshake done.
pub(crate) struct TlsConnection {
    stream: TlsStream<TcpStream>,
    peer: std::net::SocketAddr,
}

impl tonic::transport::server::Connected for TlsConnection {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.get_ref().0.connect_info()
    }
}

impl AsyncRead for TlsConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
