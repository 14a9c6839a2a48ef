//! Beeline's gateway: Zeebe's gRPC API (`gateway_protocol.Gateway`, port 26500) and Camunda's
//! REST API (`/v2`, port 8080) over the node's partitions.
//!
//! ```text
//! client ─gRPC─▶ grpc/  ─┐                       ┌─▶ dispatch.rs: route (routing.rs)
//!                        ├─▶ operations/<op>.rs ─┤     ─▶ in-flight limit (backpressure/)
//! client ─REST─▶ rest/  ─┘   (validate, command) └─▶ PartitionHandle::execute ─▶ event
//! ```
//!
//! - `operations/`: each client operation once, transport-neutral: plain request and result
//!   types, validation (`validate.rs`), the command, routing, the answer. The transports are
//!   thin adapters with one error table each (`grpc/status.rs`, `rest/problem.rs`).
//! - [`proto`]: our own definition of Zeebe 8.8's gateway protocol and the code tonic generates
//!   from it, from the `beeline-gateway-protocol` crate.
//! - An operation whose command the engine does not process yet answers UNIMPLEMENTED (HTTP
//!   501), naming what is missing; it works as soon as `Engine::supported_commands()` lists its
//!   intent.
//! - Job activation waits for jobs (`jobs.rs`); the partitions' job notifications
//!   (`PartitionHandle::job_notifications`) wake waiting calls at once, a probe interval is the
//!   fallback. With a `JobStreams` registry (`Cluster::with_job_streams`, as the node wires it),
//!   the partitions push new jobs to open streams directly (`operations/stream_jobs.rs`).

mod auth;
pub mod backpressure;
mod cluster;
mod config;
mod dispatch;
mod error;
mod forwarding;
mod grpc;
mod jobs;
mod metrics;
mod operations;
mod remote;
mod rest;
pub mod routing;
pub mod tenancy;
mod tls;
mod validate;

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{broadcast, watch};

pub use auth::{AuthConfig, AuthError, JwksSource, OidcConfig};
pub use cluster::{Cluster, NodeInfo, PartitionSlot};
pub use config::{DEFAULT_MAX_MESSAGE_SIZE, GatewayConfig};
pub use error::GatewayError;
pub use metrics::GatewayMetrics;
pub use tenancy::TenancyConfig;
pub use tls::{TlsConfig, TlsError};

use dispatch::Dispatcher;

pub use beeline_gateway_protocol::{code_name, proto};

/// A server of the gateway failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the gRPC server failed: {0}")]
    Grpc(tonic::transport::Error),
    #[error("the REST server failed: {0}")]
    Rest(std::io::Error),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error(transparent)]
    Auth(#[from] AuthError),
}

/// The backpressure state of one partition, for metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionLoad {
    pub partition: u16,
    pub inflight: usize,
    /// `None` when backpressure is off.
    pub limit: Option<usize>,
    pub rejected: u64,
}

/// The gateway of one node.
pub struct Gateway {
    d: Arc<Dispatcher>,
    stopping: watch::Sender<bool>,
}

impl Gateway {
    pub fn new(cluster: Cluster, config: GatewayConfig) -> Self {
        let (stopping, stopping_rx) = watch::channel(false);
        let d = Dispatcher::new(cluster, config, Dispatcher::engine_commands(), stopping_rx);
        Self {
            d: Arc::new(d),
            stopping,
        }
    }

    /// Send a job type here when jobs of it became activatable: waiting ActivateJobs and
    /// StreamActivatedJobs calls for that type look again at once. `serve` forwards the
    /// notifications of the open partitions here itself.
    pub fn jobs_available(&self) -> broadcast::Sender<String> {
        self.d.jobs_available.clone()
    }

    /// Runs the commands other brokers' gateways forward to partitions led here: hand it to
    /// the internal API's server (`beeline_cluster::BrokerServices::executor`).
    pub fn executor(&self) -> Arc<dyn beeline_cluster::Executor> {
        Arc::new(remote::Forwarded { d: self.d.clone() })
    }

    /// Request counts and durations, and backpressure, for the node's metrics endpoint.
    pub fn metrics(&self) -> GatewayMetrics {
        GatewayMetrics { d: self.d.clone() }
    }

    /// In-flight commands and limits per partition.
    pub fn load(&self) -> Vec<PartitionLoad> {
        self.d
            .partitions()
            .map(|(partition, p)| PartitionLoad {
                partition,
                inflight: p.limiter.inflight(),
                limit: p.limiter.limit(),
                rejected: p.limiter.rejected(),
            })
            .collect()
    }

    /// Ends waiting calls (long polls answer, job streams close with UNAVAILABLE). `serve`
    /// does this itself when its shutdown signal fires.
    pub fn stop(&self) {
        let _ = self.stopping.send(true);
    }

    /// Serves gRPC on `grpc` and, when given, the REST API on `rest`, until `shutdown`
    /// completes; then stops accepting, ends waiting calls, lets the calls in flight finish and
    /// returns.
    pub async fn serve(
        &self,
        grpc: tokio::net::TcpListener,
        rest: Option<tokio::net::TcpListener>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServeError> {
        let tls = |alpn| {
            self.d
                .config
                .tls
                .as_ref()
                .map(|tls| tls.server_config(alpn))
                .transpose()
        };
        let (grpc_tls, rest_tls) = (tls(tls::Alpn::Grpc)?, tls(tls::Alpn::Rest)?);
        let auth = Arc::new(
            auth::Authenticator::new(self.d.config.auth.clone(), self.d.config.tenancy.clone())
                .await?,
        );
        let forwarders = self.forward_job_notifications();
        let stopped = |mut stopping: watch::Receiver<bool>| async move {
            let _ = stopping.wait_for(|stopping| *stopping).await;
        };
        let grpc = grpc::serve(
            self.d.clone(),
            grpc,
            grpc_tls,
            auth.clone(),
            stopped(self.stopping.subscribe()),
        );
        let rest = async {
            match rest {
                Some(listener) => {
                    let stopped = stopped(self.stopping.subscribe());
                    rest::serve(self.d.clone(), listener, rest_tls, auth, stopped).await
                }
                None => Ok(()),
            }
        };
        let signal = async {
            shutdown.await;
            tracing::info!("the gateway stops accepting calls and finishes those in flight");
            self.stop();
        };
        let (grpc, rest, ()) = tokio::join!(grpc, rest, signal);
        for forwarder in forwarders {
            forwarder.abort();
        }
        grpc.map_err(ServeError::Grpc)?;
        rest.map_err(ServeError::Rest)
    }

    /// One task per open partition passing its job notifications on to waiting calls.
    fn forward_job_notifications(&self) -> Vec<tokio::task::JoinHandle<()>> {
        self.d
            .partitions()
            .filter_map(|(_, p)| p.slot.handle().cloned())
            .map(|handle| {
                let mut notifications = handle.job_notifications();
                let jobs_available = self.d.jobs_available.clone();
                tokio::spawn(async move {
                    loop {
                        match notifications.recv().await {
                            Ok(job_type) => {
                                let _ = jobs_available.send(job_type);
                            }
                            // Missed some: wake every waiting call to look again.
                            Err(broadcast::error::RecvError::Lagged(_)) => {
                                let _ = jobs_available.send(String::new());
                            }
                            Err(broadcast::error::RecvError::Closed) => return,
                        }
                    }
                })
            })
            .collect()
    }
}
