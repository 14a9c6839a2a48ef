//! Authentication on both APIs: basic users from the configuration, and OIDC bearer tokens
//! (JWTs signed by keys made here with `openssl`, checked against a JWKS file, or one served
//! over HTTPS). A call without
//! valid credentials is UNAUTHENTICATED (gRPC) or 401 problem+json (REST), saying what was wrong.

use std::collections::HashMap;
use std::process::Command;

use base64::Engine as _;
use beeline_gateway::{AuthConfig, JwksSource, OidcConfig, TlsConfig};
use jsonwebtoken::{Algorithm, EncodingKey, Header};

use super::rest::http;
use super::*;

/// Topology over gRPC with `authorization` (when given): Ok, or the status's message.
async fn topology(node: &Node, authorization: Option<&str>) -> Result<(), (Code, String)> {
    let mut request = tonic::Request::new(TopologyRequest {});
    if let Some(value) = authorization {
        request
            .metadata_mut()
            .insert("authorization", value.parse().expect("a metadata value"));
    }
    node.client()
        .topology(request)
        .await
        .map(drop)
        .map_err(|status| (status.code(), status.message().to_owned()))
}

/// GET /v2/topology with `authorization`: the status, the body and `WWW-Authenticate`.
async fn rest_topology(node: &Node, authorization: Option<&str>) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(node.rest)
        .await
        .expect("connects");
    let header = authorization.map_or(String::new(), |v| format!("Authorization: {v}\r\n"));
    stream
        .write_all(
            format!("GET /v2/topology HTTP/1.1\r\nHost: x\r\n{header}Connection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .expect("writes");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("reads");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer[9..12].parse().expect("a status");
    let challenge = answer
        .lines()
        .find_map(|l| l.strip_prefix("www-authenticate: "))
        .unwrap_or_default()
        .to_owned();
    (status, answer, challenge)
}

fn basic(user: &str, password: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {encoded}")
}

#[tokio::test]
async fn basic_users_from_the_configuration_and_nobody_else() {
    let users = HashMap::from([("demo".to_owned(), "s3cret".to_owned())]);
    let config = GatewayConfig {
        auth: AuthConfig::Basic(users),
        ..GatewayConfig::default()
    };
    let node = Node::start_with(1, config, |_| {}).await;

    let (code, message) = topology(&node, None).await.expect_err("no credentials");
    assert_eq!(code, Code::Unauthenticated);
    assert!(
        message.contains("Authorization header with Basic credentials"),
        "{message}"
    );
    let (code, message) = topology(&node, Some(&basic("demo", "wrong")))
        .await
        .expect_err("a wrong password");
    assert_eq!(code, Code::Unauthenticated);
    assert_eq!(message, "Wrong user name or password for 'demo'");
    let (_, message) = topology(&node, Some("Bearer abc"))
        .await
        .expect_err("another scheme");
    assert!(message.contains("but got 'Bearer'"), "{message}");
    topology(&node, Some(&basic("demo", "s3cret")))
        .await
        .expect("the right password");

    let (status, answer, challenge) = rest_topology(&node, None).await;
    assert_eq!(status, 401, "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    assert!(answer.contains("\"title\":\"UNAUTHORIZED\""), "{answer}");
    assert_eq!(challenge, "Basic realm=\"beeline\"");
    let (status, answer, _) = rest_topology(&node, Some(&basic("demo", "s3cret"))).await;
    assert_eq!(status, 200, "{answer}");
    // Every path, the API's 404s included, asks for credentials first.
    let answer = http(
        node.rest,
        "POST",
        "/v2/process-instances",
        "application/json",
        b"{}",
    )
    .await;
    assert_eq!(answer.status, 401);
}

/// An RSA key made by openssl: (its DER for signing, its JWK with `kid`).
fn rsa_key(dir: &std::path::Path, name: &str, kid: &str) -> (Vec<u8>, serde_json::Value) {
    let pem = dir.join(format!("{name}.pem"));
    let run = |args: &[&str]| {
        let output = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl runs (it makes the test's keys)");
        assert!(output.status.success(), "openssl {args:?}: {output:?}");
        output.stdout
    };
    let pem_path = pem.to_str().expect("a path");
    run(&["genrsa", "-out", pem_path, "2048"]);
    let der = run(&["rsa", "-in", pem_path, "-outform", "DER", "-traditional"]);
    let modulus =
        String::from_utf8(run(&["rsa", "-in", pem_path, "-noout", "-modulus"])).expect("text");
    let hex = modulus.trim().trim_start_matches("Modulus=");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    let n = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let jwk = serde_json::json!({"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": n, "e": "AQAB"});
    (der, jwk)
}

fn token(der: &[u8], kid: &str, claims: serde_json::Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_rsa_der(der)).expect("signs")
}

#[tokio::test]
async fn oidc_bearer_tokens_are_checked_against_the_jwks() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (key, jwk) = rsa_key(dir.path(), "idp", "key-1");
    let (stranger, _) = rsa_key(dir.path(), "stranger", "key-2");
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, serde_json::json!({ "keys": [jwk] }).to_string()).expect("writes");
    let config = GatewayConfig {
        auth: AuthConfig::Oidc(OidcConfig {
            jwks: JwksSource::File(jwks),
            issuer: Some("http://idp.test/realms/camunda".into()),
            audience: Some("zeebe-api".into()),
            ..OidcConfig::new(JwksSource::File(std::path::PathBuf::new()))
        }),
        ..GatewayConfig::default()
    };
    let node = Node::start_with(1, config, |_| {}).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock")
        .as_secs();
    let claims = |aud: &str, exp: u64| serde_json::json!({"iss": "http://idp.test/realms/camunda", "aud": aud, "sub": "worker", "exp": exp, "iat": now});
    let bearer = |token: String| format!("Bearer {token}");

    let good = bearer(token(&key, "key-1", claims("zeebe-api", now + 300)));
    topology(&node, Some(&good)).await.expect("a valid token");
    let (status, answer, _) = rest_topology(&node, Some(&good)).await;
    assert_eq!(status, 200, "{answer}");

    for (authorization, expected) in [
        (None, "Authorization header with Bearer credentials"),
        (Some("Bearer not-a-jwt".to_owned()), "not a JWT"),
        (
            Some(bearer(token(&key, "key-1", claims("zeebe-api", now - 600)))),
            "has expired",
        ),
        (
            Some(bearer(token(
                &key,
                "key-1",
                claims("operate-api", now + 300),
            ))),
            "not for audience 'zeebe-api'",
        ),
        (
            Some(bearer(token(
                &stranger,
                "key-2",
                claims("zeebe-api", now + 300),
            ))),
            "key 'key-2', which the JWKS does not hold",
        ),
        (
            Some(bearer(token(
                &stranger,
                "key-1",
                claims("zeebe-api", now + 300),
            ))),
            "signature is wrong",
        ),
    ] {
        let (code, message) = topology(&node, authorization.as_deref())
            .await
            .expect_err(expected);
        assert_eq!(code, Code::Unauthenticated, "{message}");
        assert!(message.contains(expected), "{expected}: {message}");
        let (status, answer, challenge) = rest_topology(&node, authorization.as_deref()).await;
        assert_eq!(status, 401, "{answer}");
        assert!(answer.contains(expected), "{expected}: {answer}");
        assert_eq!(challenge, "Bearer");
    }
}

/// Serves `body` over HTTPS (the certificate `tls` signed by the test's CA) to every
/// connection, each answered once: the address, and a count of the answers given.
async fn https_server(
    tls: &TlsConfig,
    body: String,
) -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&tls.certificate)
        .expect("the certificate")
        .collect::<Result<_, _>>()
        .expect("the certificate's PEM");
    let key = PrivateKeyDer::from_pem_file(&tls.private_key).expect("the key");
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("a server configuration");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("its address");
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = answered.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, body, count) = (acceptor.clone(), body.clone(), count.clone());
            tokio::spawn(async move {
                // A client that does not trust the certificate ends here.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut request = Vec::new();
                let mut chunk = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&chunk[..n]),
                    }
                }
                assert!(request.starts_with(b"GET /jwks HTTP/1.0\r\n"));
                let answer = format!(
                    "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                tls.write_all(answer.as_bytes()).await.expect("answers");
                tls.shutdown().await.expect("closes");
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
    });
    (address, answered)
}

#[tokio::test]
async fn a_jwks_is_read_over_https_checking_the_server_certificate() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (ca, server) = super::tls::certificates(dir.path());
    let (key, jwk) = rsa_key(dir.path(), "idp", "key-1");
    let (address, answered) =
        https_server(&server, serde_json::json!({ "keys": [jwk] }).to_string()).await;
    let oidc = |host: &str, jwks_ca: Option<std::path::PathBuf>| {
        AuthConfig::Oidc(OidcConfig {
            jwks_ca,
            ..OidcConfig::new(JwksSource::Url(format!(
                "https://{host}:{}/jwks",
                address.port()
            )))
        })
    };

    // The test's CA is no system authority: without it the server is not trusted, and a
    // node would not start.
    let error = oidc("localhost", None)
        .check()
        .await
        .expect_err("an untrusted server")
        .to_string();
    assert!(
        error.contains(&format!(
            "cannot read the JWKS at https://localhost:{}/jwks",
            address.port()
        )) && error.contains("certificate"),
        "{error}"
    );
    let missing = oidc("localhost", Some(dir.path().join("absent.pem")))
        .check()
        .await
        .expect_err("a CA file that is not there")
        .to_string();
    assert!(missing.contains("absent.pem"), "{missing}");
    assert_eq!(answered.load(std::sync::atomic::Ordering::SeqCst), 0);

    // Trusting it, by name and by address (both in the certificate), the keys are read.
    oidc("127.0.0.1", Some(ca.clone()))
        .check()
        .await
        .expect("the JWKS over HTTPS");
    let node = Node::start_with(
        1,
        GatewayConfig {
            auth: oidc("localhost", Some(ca)),
            ..GatewayConfig::default()
        },
        |_| {},
    )
    .await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock")
        .as_secs();
    let claims = serde_json::json!({"sub": "worker", "exp": now + 300, "iat": now});
    let good = format!("Bearer {}", token(&key, "key-1", claims));
    topology(&node, Some(&good))
        .await
        .expect("a token signed by a key of the HTTPS JWKS");
    assert!(answered.load(std::sync::atomic::Ordering::SeqCst) >= 2);
}
