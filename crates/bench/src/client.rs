//! The gateway as the load sees it, over either API a Zeebe user's clients speak: Zeebe's gRPC
//! (`gateway_protocol.Gateway`, any Zeebe gateway) or Camunda's REST API (`/v2`, any server of
//! the Camunda 8 REST API), with the same few calls: deploy, create, publish, activate,
//! complete. Errors are named as gRPC codes on both (a REST problem's `title` is the code's
//! name), so a report reads the same whichever API the load went through.
//!
//! The REST client keeps HTTP/1.1 connections alive in a pool, as Camunda's Java client does;
//! each request in flight takes a connection of its own (a long poll holds one while it waits).

use std::future::Future;
use std::time::Duration;

use beeline_gateway_protocol::code_name;
use beeline_gateway_protocol::proto;
use beeline_gateway_protocol::proto::gateway_client::GatewayClient;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use serde_json::value::RawValue;
use tonic::transport::{Channel, Endpoint};

/// Which API the load goes through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Api {
    /// Zeebe's gRPC gateway protocol (port 26500).
    #[default]
    Grpc,
    /// Camunda's REST API under /v2 (port 8080).
    Rest,
}

impl Api {
    pub fn name(self) -> &'static str {
        match self {
            Api::Grpc => "gRPC",
            Api::Rest => "REST",
        }
    }
}

/// A request that did not succeed: the gRPC code's name (`RESOURCE_EXHAUSTED`, ...) and what
/// the gateway said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
}

impl Failure {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// Worth sending again after a back-off.
    pub fn retriable(&self) -> bool {
        matches!(
            self.code,
            "RESOURCE_EXHAUSTED" | "UNAVAILABLE" | "DEADLINE_EXCEEDED"
        )
    }

    /// The gateway shed the request (backpressure).
    pub fn refused(&self) -> bool {
        self.code == "RESOURCE_EXHAUSTED"
    }
}

impl From<tonic::Status> for Failure {
    fn from(status: tonic::Status) -> Self {
        Self::new(code_name(status.code()), status.message())
    }
}

/// A job as a worker gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub key: i64,
    pub element_id: String,
    /// The job's variables, as JSON text.
    pub variables: String,
}

/// What the gateway says about itself.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    pub partitions: Option<u32>,
    pub version: Option<String>,
}

/// One connection (gRPC: one HTTP/2 connection; REST: a pool of HTTP/1.1 connections) to the
/// gateway. Cheap to clone: clones share it.
#[derive(Clone)]
pub enum Client {
    Grpc(GatewayClient<Channel>),
    Rest(Rest),
}

#[derive(Clone)]
pub struct Rest {
    /// `http://host:port/v2`
    base: String,
    http: HttpClient<HttpConnector, Full<Bytes>>,
}

/// Runs `fut` with a deadline; running out is DEADLINE_EXCEEDED like a server-side timeout.
pub async fn within<T>(
    limit: Duration,
    fut: impl Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(limit, fut).await {
        Ok(result) => result,
        Err(_) => Err(Failure::new(
            "DEADLINE_EXCEEDED",
            "no answer in time (client deadline)",
        )),
    }
}

/// The address as a URL (`http://` unless it names a scheme).
fn url(address: &str) -> String {
    if address.contains("://") {
        address.trim_end_matches('/').to_string()
    } else {
        format!("http://{address}")
    }
}

impl Client {
    /// Lazy: a gateway that is down shows up as UNAVAILABLE errors on the requests, counted
    /// like any other.
    pub fn connect(api: Api, address: &str) -> Result<Client, String> {
        match api {
            Api::Grpc => {
                let endpoint = Endpoint::from_shared(url(address))
                    .map_err(|e| e.to_string())?
                    .connect_timeout(Duration::from_secs(5))
                    .tcp_nodelay(true)
                    .http2_keep_alive_interval(Duration::from_secs(30))
                    .keep_alive_while_idle(true);
                Ok(Client::Grpc(
                    GatewayClient::new(endpoint.connect_lazy())
                        // Activated jobs carry the payload; a batch of them with a large
                        // payload exceeds tonic's 4 MiB default.
                        .max_decoding_message_size(256 << 20)
                        .max_encoding_message_size(256 << 20),
                ))
            }
            Api::Rest => {
                let base = format!("{}/v2", url(address));
                let uri: hyper::Uri = base.parse().map_err(|e| format!("{base}: {e}"))?;
                if uri.scheme_str() != Some("http") {
                    return Err(format!("{base}: only http:// is supported"));
                }
                let mut connector = HttpConnector::new();
                connector.set_nodelay(true);
                connector.set_connect_timeout(Some(Duration::from_secs(5)));
                let http = HttpClient::builder(TokioExecutor::new())
                    .pool_idle_timeout(Duration::from_secs(90))
                    .build(connector);
                Ok(Client::Rest(Rest { base, http }))
            }
        }
    }

    pub async fn topology(&self) -> Topology {
        match self {
            Client::Grpc(client) => {
                let mut client = client.clone();
                match within(Duration::from_secs(10), async {
                    Ok(client
                        .topology(proto::TopologyRequest {})
                        .await?
                        .into_inner())
                })
                .await
                {
                    Ok(t) => {
                        let version = Some(t.gateway_version)
                            .filter(|v| !v.is_empty())
                            .or_else(|| t.brokers.first().map(|b| b.version.clone()))
                            .filter(|v| !v.is_empty());
                        Topology {
                            partitions: u32::try_from(t.partitions_count).ok().filter(|p| *p > 0),
                            version,
                        }
                    }
                    Err(_) => Topology::default(),
                }
            }
            Client::Rest(rest) => {
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct RestTopology {
                    partitions_count: Option<u32>,
                    gateway_version: Option<String>,
                }
                match within(Duration::from_secs(10), rest.call("GET", "/topology", None))
                    .await
                    .and_then(|body| parse::<RestTopology>(&body))
                {
                    Ok(t) => Topology {
                        partitions: t.partitions_count.filter(|p| *p > 0),
                        version: t.gateway_version.filter(|v| !v.is_empty()),
                    },
                    Err(_) => Topology::default(),
                }
            }
        }
    }

    /// Deploys one BPMN resource; the key of the process `process_id` in it.
    pub async fn deploy(&self, name: &str, xml: &str, process_id: &str) -> Result<i64, Failure> {
        let no_process = || {
            Failure::new(
                "INTERNAL",
                "the deployment answer names no process of the model",
            )
        };
        match self {
            Client::Grpc(client) => {
                let request = proto::DeployResourceRequest {
                    resources: vec![proto::Resource {
                        name: name.to_string(),
                        content: xml.as_bytes().to_vec(),
                    }],
                    tenant_id: String::new(),
                };
                let response = client.clone().deploy_resource(request).await?.into_inner();
                response
                    .deployments
                    .iter()
                    .find_map(|d| match &d.metadata {
                        Some(proto::deployment::Metadata::Process(p))
                            if p.bpmn_process_id == process_id =>
                        {
                            Some(p.process_definition_key)
                        }
                        _ => None,
                    })
                    .ok_or_else(no_process)
            }
            Client::Rest(rest) => {
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Deployed {
                    deployments: Vec<Deployment>,
                }
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Deployment {
                    process_definition: Option<ProcessDefinition>,
                }
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct ProcessDefinition {
                    process_definition_id: String,
                    process_definition_key: String,
                }
                let boundary = "beeline-bench-boundary";
                let mut body = format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"resources\"; \
                     filename=\"{name}\"\r\nContent-Type: application/xml\r\n\r\n"
                )
                .into_bytes();
                body.extend_from_slice(xml.as_bytes());
                body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
                let content_type = format!("multipart/form-data; boundary={boundary}");
                let answer = rest
                    .send("POST", "/deployments", &content_type, body)
                    .await?;
                parse::<Deployed>(&answer)?
                    .deployments
                    .into_iter()
                    .filter_map(|d| d.process_definition)
                    .find(|p| p.process_definition_id == process_id)
                    .and_then(|p| p.process_definition_key.parse().ok())
                    .ok_or_else(no_process)
            }
        }
    }

    /// Starts an instance of the process `process_key` with `variables` (a JSON object).
    pub async fn create(&self, process_key: i64, variables: String) -> Result<(), Failure> {
        match self {
            Client::Grpc(client) => {
                let request = proto::CreateProcessInstanceRequest {
                    process_definition_key: process_key,
                    variables,
                    ..Default::default()
                };
                client.clone().create_process_instance(request).await?;
                Ok(())
            }
            Client::Rest(rest) => {
                let body = format!(
                    r#"{{"processDefinitionKey":"{process_key}","variables":{variables}}}"#
                );
                rest.call("POST", "/process-instances", Some(body)).await?;
                Ok(())
            }
        }
    }

    pub async fn publish(
        &self,
        name: &str,
        correlation_key: &str,
        time_to_live: Duration,
    ) -> Result<(), Failure> {
        let ttl = time_to_live.as_millis() as i64;
        match self {
            Client::Grpc(client) => {
                let request = proto::PublishMessageRequest {
                    name: name.to_string(),
                    correlation_key: correlation_key.to_string(),
                    time_to_live: ttl,
                    ..Default::default()
                };
                client.clone().publish_message(request).await?;
                Ok(())
            }
            Client::Rest(rest) => {
                let body = serde_json::json!({
                    "name": name, "correlationKey": correlation_key, "timeToLive": ttl
                })
                .to_string();
                rest.call("POST", "/messages/publication", Some(body))
                    .await?;
                Ok(())
            }
        }
    }

    /// Activates up to `max` jobs of `job_type`, waiting up to `wait` for some (`None`: not
    /// at all); `on_jobs` gets them as they arrive (gRPC: per partition's answer; REST: all in
    /// one body).
    pub async fn activate(
        &self,
        job_type: &str,
        worker: &str,
        lock: Duration,
        max: u32,
        wait: Option<Duration>,
        mut on_jobs: impl FnMut(Vec<Job>),
    ) -> Result<(), Failure> {
        let timeout = lock.as_millis() as i64;
        let request_timeout = wait.map_or(-1, |w| w.as_millis() as i64);
        match self {
            Client::Grpc(client) => {
                let request = proto::ActivateJobsRequest {
                    r#type: job_type.to_string(),
                    worker: worker.to_string(),
                    timeout,
                    max_jobs_to_activate: max as i32,
                    request_timeout,
                    ..Default::default()
                };
                let mut responses = client.clone().activate_jobs(request).await?.into_inner();
                while let Some(batch) = responses.message().await? {
                    on_jobs(batch.jobs.into_iter().map(job_of).collect());
                }
                Ok(())
            }
            Client::Rest(rest) => {
                #[derive(Deserialize)]
                struct Activated {
                    jobs: Vec<RestJob>,
                }
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct RestJob {
                    job_key: String,
                    element_id: String,
                    variables: Box<RawValue>,
                }
                let body = serde_json::json!({
                    "type": job_type, "worker": worker, "timeout": timeout,
                    "maxJobsToActivate": max, "requestTimeout": request_timeout
                })
                .to_string();
                let answer = rest.call("POST", "/jobs/activation", Some(body)).await?;
                let jobs = parse::<Activated>(&answer)?
                    .jobs
                    .into_iter()
                    .map(|job| {
                        Ok(Job {
                            key: job.job_key.parse().map_err(|_| {
                                Failure::new("INTERNAL", format!("job key {:?}", job.job_key))
                            })?,
                            element_id: job.element_id,
                            variables: String::from(Box::<str>::from(job.variables)),
                        })
                    })
                    .collect::<Result<Vec<_>, Failure>>()?;
                on_jobs(jobs);
                Ok(())
            }
        }
    }

    /// Opens a job stream (gRPC only: the REST API has no push).
    pub async fn stream(
        &self,
        job_type: &str,
        worker: &str,
        lock: Duration,
    ) -> Result<tonic::Streaming<proto::ActivatedJob>, Failure> {
        match self {
            Client::Grpc(client) => {
                let request = proto::StreamActivatedJobsRequest {
                    r#type: job_type.to_string(),
                    worker: worker.to_string(),
                    timeout: lock.as_millis() as i64,
                    ..Default::default()
                };
                Ok(client
                    .clone()
                    .stream_activated_jobs(request)
                    .await?
                    .into_inner())
            }
            Client::Rest(_) => Err(Failure::new(
                "UNIMPLEMENTED",
                "the REST API has no job streams; use --poll with --api rest",
            )),
        }
    }

    /// Completes the job `key` with `variables` (a JSON object).
    pub async fn complete(&self, key: i64, variables: String) -> Result<(), Failure> {
        match self {
            Client::Grpc(client) => {
                let request = proto::CompleteJobRequest {
                    job_key: key,
                    variables,
                    result: None,
                };
                client.clone().complete_job(request).await?;
                Ok(())
            }
            Client::Rest(rest) => {
                let body = format!(r#"{{"variables":{variables}}}"#);
                rest.call("POST", &format!("/jobs/{key}/completion"), Some(body))
                    .await?;
                Ok(())
            }
        }
    }
}

/// A job of a gRPC answer or stream.
pub fn job_of(job: proto::ActivatedJob) -> Job {
    Job {
        key: job.key,
        element_id: job.element_id,
        variables: job.variables,
    }
}

impl Rest {
    /// A JSON request (or none); the answer's body on success.
    async fn call(&self, method: &str, path: &str, body: Option<String>) -> Result<Bytes, Failure> {
        self.send(
            method,
            path,
            "application/json",
            body.map(String::into_bytes).unwrap_or_default(),
        )
        .await
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Bytes, Failure> {
        let request = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(hyper::header::CONTENT_TYPE, content_type)
            .header(hyper::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Failure::new("INTERNAL", e.to_string()))?;
        let response = self
            .http
            .request(request)
            .await
            .map_err(|e| Failure::new("UNAVAILABLE", format!("{e:?}")))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| Failure::new("UNAVAILABLE", e.to_string()))?
            .to_bytes();
        if status.is_success() {
            Ok(body)
        } else {
            Err(problem(status.as_u16(), &body))
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Failure> {
    serde_json::from_slice(body).map_err(|e| {
        Failure::new(
            "INTERNAL",
            format!("unexpected answer ({e}): {}", String::from_utf8_lossy(body)),
        )
    })
}

/// A REST error as a gRPC code: the problem's `title` where it names one, else the status's
/// usual code (Camunda's mapping, reversed).
fn problem(status: u16, body: &[u8]) -> Failure {
    #[derive(Deserialize, Default)]
    struct Problem {
        title: Option<String>,
        detail: Option<String>,
    }
    let problem: Problem = serde_json::from_slice(body).unwrap_or_default();
    let by_title = problem.title.as_deref().and_then(code_of_name);
    let code = by_title.unwrap_or(match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "FAILED_PRECONDITION",
        429 | 503 => "RESOURCE_EXHAUSTED",
        501 => "UNIMPLEMENTED",
        502 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    });
    let message = problem
        .detail
        .unwrap_or_else(|| format!("HTTP {status}: {}", String::from_utf8_lossy(body)));
    Failure::new(code, message)
}

/// The gRPC code a problem's title names (REST titles are code and rejection names).
fn code_of_name(title: &str) -> Option<&'static str> {
    Some(match title {
        "INVALID_ARGUMENT" => "INVALID_ARGUMENT",
        "NOT_FOUND" => "NOT_FOUND",
        "ALREADY_EXISTS" => "ALREADY_EXISTS",
        "INVALID_STATE" | "FAILED_PRECONDITION" => "FAILED_PRECONDITION",
        "RESOURCE_EXHAUSTED" => "RESOURCE_EXHAUSTED",
        "UNAVAILABLE" => "UNAVAILABLE",
        "DEADLINE_EXCEEDED" => "DEADLINE_EXCEEDED",
        "UNIMPLEMENTED" => "UNIMPLEMENTED",
        "INTERNAL" | "PROCESSING_ERROR" => "INTERNAL",
        "UNAUTHORIZED" | "UNAUTHENTICATED" => "UNAUTHENTICATED",
        "FORBIDDEN" | "PERMISSION_DENIED" => "PERMISSION_DENIED",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_problems_read_as_grpc_codes() {
        let shed = problem(
            503,
            br#"{"type":"about:blank","title":"RESOURCE_EXHAUSTED","status":503,"detail":"Reached maximum capacity"}"#,
        );
        assert_eq!(shed.code, "RESOURCE_EXHAUSTED");
        assert!(shed.refused() && shed.retriable());
        assert_eq!(shed.message, "Reached maximum capacity");
        let gone = problem(404, br#"{"title":"NOT_FOUND","detail":"no such job"}"#);
        assert_eq!(gone.code, "NOT_FOUND");
        assert!(!gone.retriable());
        let conflict = problem(409, br#"{"title":"INVALID_STATE"}"#);
        assert_eq!(conflict.code, "FAILED_PRECONDITION");
        // Not problem+json: by the status alone.
        let bare = problem(504, b"gateway timeout");
        assert_eq!(bare.code, "DEADLINE_EXCEEDED");
        assert!(bare.message.contains("gateway timeout"));
        assert_eq!(problem(429, b"").code, "RESOURCE_EXHAUSTED");
    }

    #[test]
    fn addresses_become_urls() {
        assert_eq!(url("127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(url("http://h:1/"), "http://h:1");
        assert!(Client::connect(Api::Rest, "https://h:1").is_err());
        assert!(Client::connect(Api::Rest, "127.0.0.1:8080").is_ok());
    }
}
