//! Where the gateway is, reaching it, and what can go wrong on the way.

use std::future::Future;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use beeline_gateway_protocol::code_name;
use beeline_gateway_protocol::proto::gateway_client::GatewayClient;
use tonic::transport::{Channel, Endpoint};

/// The gateway a command talks to when neither `--gateway` nor the environment names one.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:26500";

/// Zeebe's gRPC port, for an address given without one.
const DEFAULT_PORT: u16 = 26500;

/// How long connecting may take before the gateway counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How a command reaches the gateway and how it answers; every command takes these.
#[derive(Debug, Clone, clap::Args)]
pub struct Connection {
    /// The Zeebe gateway: HOST:PORT, or http://HOST:PORT (plaintext). Without it: $BEELINE_GATEWAY,
    /// else $ZEEBE_ADDRESS (as zbctl and Zeebe's clients read it), else 127.0.0.1:26500
    #[arg(long, value_name = "HOST:PORT", env = "BEELINE_GATEWAY")]
    pub gateway: Option<String>,

    /// Prints the gateway's answer as JSON for scripts (Zeebe's field names, keys as strings, as
    /// zbctl prints it); the gateway's error, or why it could not be reached, as
    /// {"code", "message"} on stderr
    #[arg(long)]
    pub json: bool,

    /// How long to wait for the gateway's answer; with `create --with-result`, how long the
    /// gateway waits for the instance to complete
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = beeline_units::parse_duration)]
    pub request_timeout: Duration,
}

impl Connection {
    /// The address this command talks to: `--gateway`, `$BEELINE_GATEWAY`, `$ZEEBE_ADDRESS`,
    /// or the default, in that order.
    pub fn address(&self) -> String {
        self.gateway
            .clone()
            .or_else(|| std::env::var("ZEEBE_ADDRESS").ok())
            .filter(|address| !address.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_ADDRESS.to_owned())
    }

    /// One HTTP/2 connection to the gateway, made now, so an unreachable gateway is reported
    /// as such and not as the failure of the request.
    pub async fn connect(&self) -> Result<GatewayClient<Channel>, Error> {
        let address = self.address();
        let url = endpoint_url(&address)?;
        let endpoint = Endpoint::from_shared(url)
            .map_err(|e| Error::Usage(format!("invalid gateway address `{address}`: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT);
        match endpoint.connect().await {
            Ok(channel) => Ok(GatewayClient::new(channel)),
            Err(e) => Err(Error::Status {
                code: tonic::Code::Unavailable,
                message: format!("cannot connect to the gateway at {address}: {}", causes(&e)),
            }),
        }
    }

    /// Sends one request with the command's deadline (`extra` more for a request whose own
    /// timeout is the deadline, so the gateway's answer comes first); the gateway is told
    /// the deadline too (`grpc-timeout`).
    pub async fn call<Req, Resp, Fut>(
        &self,
        message: Req,
        extra: Duration,
        send: impl FnOnce(tonic::Request<Req>) -> Fut,
    ) -> Result<Resp, Error>
    where
        Fut: Future<Output = Result<tonic::Response<Resp>, tonic::Status>>,
    {
        let deadline = self.request_timeout + extra;
        let mut request = tonic::Request::new(message);
        request.set_timeout(deadline);
        match tokio::time::timeout(deadline, send(request)).await {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status)) => Err(Error::from(status)),
            Err(_) => Err(Error::Status {
                code: tonic::Code::DeadlineExceeded,
                message: format!(
                    "no answer from the gateway at {} within {:?}",
                    self.address(),
                    deadline
                ),
            }),
        }
    }
}

/// The URL tonic connects to for a gateway address: `HOST[:PORT]`, or with an `http://` or
/// `grpc://` scheme. TLS addresses are refused: the client speaks plaintext gRPC only.
pub fn endpoint_url(address: &str) -> Result<String, Error> {
    let address = address.trim();
    let authority = match address.split_once("://") {
        None => address,
        Some(("http" | "grpc", rest)) => rest,
        Some(("https" | "grpcs", _)) => {
            return Err(Error::Usage(format!(
                "gateway `{address}`: TLS is not supported; this client speaks plaintext gRPC \
                 (http://HOST:PORT or HOST:PORT)"
            )));
        }
        Some((scheme, _)) => {
            return Err(Error::Usage(format!(
                "gateway `{address}`: unknown scheme `{scheme}`; expected HOST:PORT or \
                 http://HOST:PORT"
            )));
        }
    };
    let authority = authority.trim_end_matches('/');
    if authority.is_empty() || authority.contains('/') {
        return Err(Error::Usage(format!(
            "gateway `{address}`: expected HOST:PORT, e.g. {DEFAULT_ADDRESS}"
        )));
    }
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    Ok(if has_port {
        format!("http://{authority}")
    } else {
        format!("http://{authority}:{DEFAULT_PORT}")
    })
}

/// Why a command did not succeed.
#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    /// The arguments, or a file they name, are wrong: nothing was sent.
    Usage(String),
    /// The gateway answered with an error, or could not be reached (UNAVAILABLE) or did not
    /// answer in time (DEADLINE_EXCEEDED).
    Status { code: tonic::Code, message: String },
}

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Self {
        // A transport failure carries its reason in the source, not in the message.
        let message = if status.message().is_empty() {
            causes(&status)
        } else {
            status.message().to_owned()
        };
        Error::Status {
            code: status.code(),
            message,
        }
    }
}

impl Error {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Usage(_) => ExitCode::from(2),
            Error::Status { .. } => ExitCode::FAILURE,
        }
    }

    /// `error: CODE: message` on stderr; with `json`, the gateway's errors as one JSON object.
    pub fn print(&self, json: bool) {
        let text = match self {
            Error::Status { code, message } if json => serde_json::json!({
                "code": code_name(*code),
                "message": message,
            })
            .to_string(),
            Error::Status { code, message } => format!("error: {}: {message}", code_name(*code)),
            Error::Usage(message) => format!("error: {message}"),
        };
        let _ = writeln!(std::io::stderr(), "{text}");
    }
}

/// An error and its causes, outermost first: tonic's transport errors say "transport error"
/// and keep the reason (connection refused, ...) in their sources.
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_become_plaintext_urls() {
        assert_eq!(
            endpoint_url("127.0.0.1:26500"),
            Ok("http://127.0.0.1:26500".into())
        );
        assert_eq!(
            endpoint_url("localhost"),
            Ok("http://localhost:26500".into())
        );
        assert_eq!(
            endpoint_url("grpc://zeebe:26501/"),
            Ok("http://zeebe:26501".into())
        );
        assert_eq!(
            endpoint_url("http://[::1]:26500"),
            Ok("http://[::1]:26500".into())
        );
        assert_eq!(endpoint_url("[::1]"), Ok("http://[::1]:26500".into()));
    }

    #[test]
    fn tls_and_other_schemes_are_refused_with_the_forms_accepted() {
        let Err(Error::Usage(message)) = endpoint_url("https://cluster.camunda.io:443") else {
            panic!("https accepted");
        };
        assert!(message.contains("TLS is not supported"), "{message}");
        let Err(Error::Usage(message)) = endpoint_url("ftp://host:21") else {
            panic!("ftp accepted");
        };
        assert!(message.contains("unknown scheme `ftp`"), "{message}");
        assert!(endpoint_url("").is_err());
        assert!(endpoint_url("host:26500/path").is_err());
    }

    #[test]
    fn a_status_keeps_its_code_and_message() {
        let error = Error::from(tonic::Status::not_found("no process 'x'"));
        assert_eq!(
            error,
            Error::Status {
                code: tonic::Code::NotFound,
                message: "no process 'x'".into()
            }
        );
        assert_eq!(error.exit_code(), ExitCode::FAILURE);
        assert_eq!(Error::Usage("x".into()).exit_code(), ExitCode::from(2));
    }
}
