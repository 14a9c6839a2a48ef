//! Authentication for both APIs, one way: every gRPC call and every REST request carries an
//! `Authorization` header (gRPC metadata `authorization`), which [`Authenticator::check`] reads:
//!
//! - off (the default, as in Camunda's development setup): nothing is checked;
//! - basic: `Basic base64(user:password)`, users from the configuration;
//! - OIDC: `Bearer <JWT>`, its signature checked against the keys of a JWKS (RS256/384/512,
//!   PS256/384/512, ES256/384, EdDSA), its expiry and not-before times, and the issuer and
//!   audience when configured. The JWKS is read at start from a file or an `http://` or
//!   `https://` URL and read again when a token names a key it does not hold (at most every
//!   30 s). Over HTTPS the server's certificate is checked (rustls) against the system's
//!   certificate authorities and those of [`OidcConfig::jwks_ca`].
//!
//! A request without valid credentials is refused before it reaches an operation: gRPC with
//! UNAUTHENTICATED, REST with 401 problem+json and `WWW-Authenticate`, the message saying what
//! was wrong (missing, malformed, unknown user, expired, wrong audience, ...).
//!
//! A request let in has a principal: the basic user's name, or the OIDC token's client (the
//! client id claim, when configured and present) or else user (the username claim, `sub` by
//! default). With multi-tenancy on, the call runs as that principal's [`Caller`], with the
//! tenants assigned to it (`tenancy.rs`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use base64::Engine as _;
use http::{HeaderValue, Request, Response};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation};

use crate::tenancy::{Caller, TenancyConfig};

/// Who may call the APIs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AuthConfig {
    /// Everyone (the default).
    #[default]
    None,
    /// HTTP basic authentication: user name → password.
    Basic(HashMap<String, String>),
    /// OIDC bearer tokens.
    Oidc(OidcConfig),
}

/// Where the keys come from and what tokens must say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcConfig {
    /// The JWKS: a file, or an `http://` or `https://` URL.
    pub jwks: JwksSource,
    /// Certificate authorities (PEM) trusted for an `https://` JWKS besides the system's.
    pub jwks_ca: Option<PathBuf>,
    /// The `iss` tokens must carry, when set.
    pub issuer: Option<String>,
    /// An `aud` tokens must carry, when set.
    pub audience: Option<String>,
    /// The claim naming the user a token is for (Camunda's `usernameClaim`): `sub` by default.
    pub username_claim: String,
    /// The claim naming the client a token is for (Camunda's `clientIdClaim`); when set and a
    /// token carries it, the client is the principal.
    pub client_id_claim: Option<String>,
}

impl OidcConfig {
    /// Tokens checked against `jwks`, any issuer and audience, the principal from `sub`.
    pub fn new(jwks: JwksSource) -> Self {
        Self {
            jwks,
            jwks_ca: None,
            issuer: None,
            audience: None,
            username_claim: "sub".to_owned(),
            client_id_claim: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSource {
    File(PathBuf),
    Url(String),
}

impl AuthConfig {
    /// Reads the JWKS now (OIDC), so that a wrong setting stops the node at its start.
    pub async fn check(&self) -> Result<(), AuthError> {
        match self {
            AuthConfig::Oidc(oidc) => read_jwks(oidc).await.map(drop).map_err(AuthError),
            _ => Ok(()),
        }
    }
}

/// The JWKS could not be read at start.
#[derive(Debug, thiserror::Error)]
#[error("authentication: {0}")]
pub struct AuthError(String);

/// How often an unknown key id may make the JWKS be read again.
const JWKS_REFRESH: Duration = Duration::from_secs(30);

/// Checks credentials; shared by both transports.
pub(crate) struct Authenticator {
    config: AuthConfig,
    tenancy: TenancyConfig,
    keys: Mutex<Keys>,
}

struct Keys {
    set: JwkSet,
    read: Option<Instant>,
}

impl Authenticator {
    /// Reads the JWKS now (OIDC), so that a wrong setting stops the gateway at its start.
    pub(crate) async fn new(config: AuthConfig, tenancy: TenancyConfig) -> Result<Self, AuthError> {
        if tenancy.enabled && config == AuthConfig::None {
            return Err(AuthError(
                "multi-tenancy needs authentication (basic users or OIDC): without it no caller \
                 has tenants"
                    .into(),
            ));
        }
        let set = match &config {
            AuthConfig::Oidc(oidc) => read_jwks(oidc).await.map_err(AuthError)?,
            _ => JwkSet { keys: Vec::new() },
        };
        Ok(Self {
            config,
            tenancy,
            keys: Mutex::new(Keys {
                set,
                read: Some(Instant::now()),
            }),
        })
    }

    pub(crate) fn is_on(&self) -> bool {
        self.config != AuthConfig::None
    }

    /// The `WWW-Authenticate` challenge.
    pub(crate) fn scheme(&self) -> &'static str {
        match self.config {
            AuthConfig::Oidc(_) => "Bearer",
            _ => "Basic realm=\"beeline\"",
        }
    }

    /// The caller with the tenants assigned to `principal`, when multi-tenancy is on.
    pub(crate) fn caller(&self, principal: String) -> Option<Caller> {
        self.tenancy.enabled.then(|| Caller {
            tenants: self.tenancy.tenants_of(&principal).into(),
            principal,
        })
    }

    /// The principal when `authorization` (the header's value) lets the caller in; else what
    /// is wrong.
    pub(crate) async fn check(
        &self,
        authorization: Option<&HeaderValue>,
    ) -> Result<String, String> {
        let scheme = match &self.config {
            AuthConfig::None => return Ok(String::new()),
            AuthConfig::Basic(_) => "Basic",
            AuthConfig::Oidc(_) => "Bearer",
        };
        let Some(value) = authorization else {
            return Err(format!(
                "Expected an Authorization header with {scheme} credentials, but the request has none"
            ));
        };
        let value = value
            .to_str()
            .map_err(|_| "The Authorization header is not readable text".to_owned())?;
        let (given, credentials) = value.split_once(' ').unwrap_or((value, ""));
        if !given.eq_ignore_ascii_case(scheme) {
            return Err(format!(
                "Expected {scheme} credentials in the Authorization header, but got '{given}'"
            ));
        }
        match &self.config {
            AuthConfig::None => Ok(String::new()),
            AuthConfig::Basic(users) => basic(users, credentials.trim()),
            AuthConfig::Oidc(oidc) => self.bearer(oidc, credentials.trim()).await,
        }
    }

    async fn bearer(&self, oidc: &OidcConfig, token: &str) -> Result<String, String> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| format!("The bearer token is not a JWT: {e}"))?;
        let key = match self.key(header.kid.as_deref()) {
            Some(key) => key,
            None => {
                self.refresh(oidc).await;
                self.key(header.kid.as_deref()).ok_or_else(|| {
                    format!(
                        "The bearer token is signed with key '{}', which the JWKS does not hold",
                        header.kid.as_deref().unwrap_or("(no kid)")
                    )
                })?
            }
        };
        let mut validation = Validation::new(header.alg);
        validation.leeway = 5;
        validation.validate_nbf = true;
        match &oidc.audience {
            Some(audience) => validation.set_audience(&[audience]),
            None => validation.validate_aud = false,
        }
        if let Some(issuer) = &oidc.issuer {
            validation.set_issuer(&[issuer]);
        }
        let claims = jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    "The bearer token has expired".to_owned()
                }
                jsonwebtoken::errors::ErrorKind::InvalidAudience => format!(
                    "The bearer token is not for audience '{}'",
                    oidc.audience.as_deref().unwrap_or_default()
                ),
                jsonwebtoken::errors::ErrorKind::InvalidIssuer => format!(
                    "The bearer token was not issued by '{}'",
                    oidc.issuer.as_deref().unwrap_or_default()
                ),
                jsonwebtoken::errors::ErrorKind::InvalidSignature => {
                    "The bearer token's signature is wrong".to_owned()
                }
                _ => format!("The bearer token is not valid: {e}"),
            })?
            .claims;
        let claim = |name: &str| claims.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        oidc.client_id_claim
            .as_deref()
            .and_then(claim)
            .or_else(|| claim(&oidc.username_claim))
            .ok_or_else(|| {
                format!(
                    "The bearer token names no principal: it has no '{}' claim",
                    oidc.username_claim
                )
            })
    }

    /// The key a token names (or, for a token naming none, the only key).
    fn key(&self, kid: Option<&str>) -> Option<DecodingKey> {
        let keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let jwk = match kid {
            Some(kid) => keys.set.find(kid),
            None if keys.set.keys.len() == 1 => keys.set.keys.first(),
            None => None,
        }?;
        DecodingKey::from_jwk(jwk).ok()
    }

    /// Reads the JWKS again, unless it was read within [`JWKS_REFRESH`].
    async fn refresh(&self, oidc: &OidcConfig) {
        {
            let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            if keys.read.is_some_and(|read| read.elapsed() < JWKS_REFRESH) {
                return;
            }
            keys.read = Some(Instant::now());
        }
        match read_jwks(oidc).await {
            Ok(set) => self.keys.lock().unwrap_or_else(|e| e.into_inner()).set = set,
            Err(error) => {
                tracing::warn!(%error, "reading the JWKS again failed; the old keys stay")
            }
        }
    }
}

fn basic(users: &HashMap<String, String>, credentials: &str) -> Result<String, String> {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(credentials)
        .map_err(|_| "The Basic credentials are not base64".to_owned())?;
    let decoded =
        String::from_utf8(decoded).map_err(|_| "The Basic credentials are not UTF-8".to_owned())?;
    let (user, password) = decoded
        .split_once(':')
        .ok_or_else(|| "The Basic credentials are not user:password".to_owned())?;
    match users.get(user) {
        Some(expected) if constant_time_eq(expected.as_bytes(), password.as_bytes()) => {
            Ok(user.to_owned())
        }
        // One message for both: which user names exist is nobody's business.
        _ => Err(format!("Wrong user name or password for '{user}'")),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

async fn read_jwks(oidc: &OidcConfig) -> Result<JwkSet, String> {
    let (text, origin) = match &oidc.jwks {
        JwksSource::File(path) => (
            // A small file, read at start and at most every 30 s.
            std::fs::read(path)
                .map_err(|e| format!("cannot read the JWKS {}: {e}", path.display()))?,
            path.display().to_string(),
        ),
        JwksSource::Url(url) => (fetch(url, oidc.jwks_ca.as_deref()).await?, url.clone()),
    };
    serde_json::from_slice(&text).map_err(|e| format!("{origin} is not a JWKS: {e}"))
}

/// The largest JWKS answer read.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// GET of an `http://` or `https://` URL (the JWKS), with a 10 s bound.
async fn fetch(url: &str, ca: Option<&Path>) -> Result<Vec<u8>, String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot read the JWKS at {url}: {e}");
    let uri: http::Uri = url.parse().map_err(|e| failed(&e))?;
    let https = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        _ => {
            return Err(failed(
                &"only http:// and https:// URLs are read (or give a file)",
            ));
        }
    };
    let host = uri.host().ok_or_else(|| failed(&"no host"))?.to_owned();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let work = async {
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| failed(&e))?;
        let answer = if https {
            let connector = tokio_rustls::TlsConnector::from(client_config(ca)?);
            // An IP address is checked against the certificate's IP names, a name against its
            // DNS names.
            let name = rustls::pki_types::ServerName::try_from(host.trim_matches(['[', ']']))
                .map_err(|e| failed(&e))?
                .to_owned();
            let tls = connector.connect(name, tcp).await.map_err(|e| failed(&e))?;
            get(tls, &host, &path).await
        } else {
            get(tcp, &host, &path).await
        }
        .map_err(|e| failed(&e))?;
        let split = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| failed(&"no HTTP answer"))?;
        let head = String::from_utf8_lossy(&answer[..split]);
        let status = head.split(' ').nth(1).unwrap_or_default();
        if status != "200" {
            return Err(failed(&format!("answered {status}")));
        }
        Ok(answer[split + 4..].to_vec())
    };
    tokio::time::timeout(Duration::from_secs(10), work)
        .await
        .map_err(|_| failed(&"no answer within 10 s"))?
}

/// Sends an HTTP/1.0 GET (so the answer is neither chunked nor kept alive) and reads the
/// answer to its end, at most [`MAX_JWKS_BYTES`].
async fn get<S>(mut stream: S, host: &str, path: &str) -> std::io::Result<Vec<u8>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let request = format!(
        "GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    stream.flush().await?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 8192];
    while answer.len() < MAX_JWKS_BYTES {
        match stream.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            // A server that closes without TLS's close_notify has still sent its whole answer
            // over HTTP/1.0 with `Connection: close`.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !answer.is_empty() => {
                break;
            }
            Err(e) => return Err(e),
        }
    }
    answer.truncate(MAX_JWKS_BYTES);
    Ok(answer)
}

/// The TLS client of an `https://` JWKS: the system's certificate authorities (its trust
/// store, or `SSL_CERT_FILE` / `SSL_CERT_DIR`), and those of `ca`.
fn client_config(ca: Option<&Path>) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    let mut roots = rustls::RootCertStore::empty();
    let system = rustls_native_certs::load_native_certs();
    for error in &system.errors {
        tracing::debug!(%error, "a system certificate store could not be read");
    }
    roots.add_parsable_certificates(system.certs);
    if let Some(ca) = ca {
        let unreadable = |e: &dyn std::fmt::Display| {
            format!(
                "cannot read the JWKS's certificate authorities {}: {e}",
                ca.display()
            )
        };
        let pem = std::fs::read(ca).map_err(|e| unreadable(&e))?;
        let mut added = 0;
        for certificate in CertificateDer::pem_slice_iter(&pem) {
            let certificate = certificate.map_err(|e| unreadable(&e))?;
            roots.add(certificate).map_err(|e| unreadable(&e))?;
            added += 1;
        }
        if added == 0 {
            return Err(unreadable(&"it holds no PEM certificate"));
        }
    }
    if roots.is_empty() {
        return Err(
            "no certificate authority to check the JWKS server against: the system \
                    has none (SSL_CERT_FILE, SSL_CERT_DIR) and none was given"
                .into(),
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("no TLS protocol version: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The gRPC server's layer: a call without valid credentials is answered UNAUTHENTICATED
/// (trailers only) before it reaches a service.
#[derive(Clone)]
pub(crate) struct GrpcAuthLayer(pub std::sync::Arc<Authenticator>);

impl<S> tower_layer::Layer<S> for GrpcAuthLayer {
    type Service = GrpcAuth<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcAuth {
            inner,
            auth: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub(crate) struct GrpcAuth<S> {
    inner: S,
    auth: std::sync::Arc<Authenticator>,
}

impl<S, B, R> tower_service::Service<Request<B>> for GrpcAuth<S>
where
    S: tower_service::Service<Request<B>, Response = Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if !self.auth.is_on() {
            return Box::pin(self.inner.call(request));
        }
        // The service that was made ready serves this call; a fresh clone waits for the next.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = self.auth.clone();
        Box::pin(async move {
            match auth
                .check(request.headers().get(http::header::AUTHORIZATION))
                .await
            {
                Ok(principal) => match auth.caller(principal) {
                    Some(caller) => caller.scope(inner.call(request)).await,
                    None => inner.call(request).await,
                },
                Err(message) => {
                    let status = tonic::Status::unauthenticated(message);
                    let mut response = Response::new(R::default());
                    let headers = response.headers_mut();
                    headers.insert(
                        http::header::CONTENT_TYPE,
                        HeaderValue::from_static("application/grpc"),
                    );
                    let _ = status.add_header(headers);
                    Ok(response)
                }
            }
        })
    }
}
