//! TLS on both APIs: a node given a certificate and key (made here by `openssl`, signed by a CA
//! of the test's own) serves gRPC and REST over TLS only, with ALPN, to clients that trust the
//! CA; plaintext gets nowhere; a wrong file stops the gateway with an error naming it.

use std::path::{Path, PathBuf};
use std::process::Command;

use beeline_gateway::TlsConfig;
use prost::Message;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

use super::*;

/// A CA and a server certificate for `localhost` and 127.0.0.1 signed by it, in `dir`:
/// (CA certificate, the gateway's TLS settings).
pub(crate) fn certificates(dir: &Path) -> (PathBuf, TlsConfig) {
    let run = |args: &[&str]| {
        let output = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs (it makes the test's certificates)");
        assert!(
            output.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=beeline test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    ]);
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    )
    .expect("writes the extensions");
    run(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.pem",
    ]);
    (
        dir.join("ca.pem"),
        TlsConfig {
            certificate: dir.join("server.pem"),
            private_key: dir.join("server.key"),
        },
    )
}

/// A TLS connection to `address` trusting only `ca`, offering `alpn`; the protocol agreed.
async fn connect(
    address: SocketAddr,
    ca: &Path,
    alpn: &[u8],
) -> (
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    Vec<u8>,
) {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).expect("the CA file") {
        roots
            .add(cert.expect("a CA certificate"))
            .expect("a usable CA");
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let tcp = tokio::net::TcpStream::connect(address)
        .await
        .expect("connects");
    let stream = TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").expect("a name"), tcp)
        .await
        .expect("the TLS handshake succeeds");
    let agreed = stream
        .get_ref()
        .1
        .alpn_protocol()
        .unwrap_or_default()
        .to_vec();
    (stream, agreed)
}

#[tokio::test]
async fn both_apis_serve_tls_with_the_configured_certificate_and_nothing_else() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (ca, tls) = certificates(dir.path());
    let config = GatewayConfig {
        tls: Some(tls),
        ..GatewayConfig::default()
    };
    let node = Node::start_with(1, config, |_| {}).await;

    // gRPC: HTTP/2 over TLS, agreed by ALPN; Topology answers.
    let (stream, agreed) = connect(node.address, &ca, b"h2").await;
    assert_eq!(agreed, b"h2");
    let (mut client, connection) = h2::client::handshake(stream).await.expect("HTTP/2");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = http::Request::builder()
        .method("POST")
        .uri("https://localhost/gateway_protocol.Gateway/Topology")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .expect("a request");
    let (response, mut send) = client.send_request(request, false).expect("sends");
    send.send_data(Bytes::from(frame(0, 0, &[])), true)
        .expect("sends the message");
    let mut body = response.await.expect("an answer").into_body();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        bytes.extend_from_slice(&chunk.expect("a chunk"));
    }
    let trailers = body.trailers().await.expect("trailers").unwrap_or_default();
    assert_eq!(
        trailers.get("grpc-status").map(|v| v.as_bytes()),
        Some(&b"0"[..]),
        "{trailers:?}"
    );
    let topology = TopologyResponse::decode(&bytes[5..]).expect("a topology");
    assert_eq!(topology.partitions_count, 1);

    // REST: HTTP/1.1 over TLS.
    let (mut stream, agreed) = connect(node.rest, &ca, b"http/1.1").await;
    assert_eq!(agreed, b"http/1.1");
    stream
        .write_all(b"GET /v2/topology HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .expect("writes");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"partitionsCount\":1"), "{answer}");

    // Plaintext gets no answer from either port.
    let plaintext = GatewayClient::connect(format!("http://{}", node.address)).await;
    let refused = match plaintext {
        Err(_) => true,
        Ok(mut client) => client.topology(TopologyRequest {}).await.is_err(),
    };
    assert!(refused, "a plaintext gRPC call was answered");
    let mut tcp = tokio::net::TcpStream::connect(node.rest)
        .await
        .expect("connects");
    tcp.write_all(b"GET /v2/topology HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("writes");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer)).await;
    assert!(
        !String::from_utf8_lossy(&answer).contains("partitionsCount"),
        "a plaintext REST request was answered"
    );
}

#[test]
fn a_missing_or_wrong_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (ca, tls) = certificates(dir.path());
    let missing = TlsConfig {
        certificate: dir.path().join("nope.pem"),
        ..tls.clone()
    };
    let error = missing
        .check()
        .expect_err("a missing certificate")
        .to_string();
    assert!(error.contains("nope.pem"), "{error}");
    // A certificate where the key should be.
    let not_a_key = TlsConfig {
        private_key: ca.clone(),
        ..tls.clone()
    };
    let error = not_a_key.check().expect_err("no key").to_string();
    assert!(
        error.contains("ca.pem") && error.contains("private key"),
        "{error}"
    );
    // The CA's key with the server's certificate.
    let mismatched = TlsConfig {
        private_key: dir.path().join("ca.key"),
        ..tls.clone()
    };
    let error = mismatched
        .check()
        .expect_err("a key of another certificate")
        .to_string();
    assert!(error.contains("does not fit"), "{error}");
    tls.check().expect("the right pair");
}
