//! Beeline's gRPC gateway, speaking Zeebe's `gateway_protocol.Gateway` service.
//!
//! ```text
//! client ─gRPC─▶ service.rs ─▶ rpc/<method>.rs: check engine support, validate, translate
//!                                  │ request → command record
//!                                  ▼
//!                 dispatch.rs: route (routing.rs) ─▶ in-flight limit (backpressure/)
//!                                  ─▶ PartitionHandle::execute ─▶ event or rejection
//!                                  ▼
//!                 rpc/<method>.rs: event → response;  error.rs: everything else → status
//! ```
//!
//! - [`proto`]: our own definition of Zeebe 8.8's gateway protocol and the code tonic generates
//!   from it, from the `beeline-gateway-protocol` crate.
//! - An RPC whose command the engine does not process yet answers UNIMPLEMENTED, naming what is
//!   missing; it works as soon as `Engine::supported_commands()` lists its intent.
//! - ActivateJobs and StreamActivatedJobs wait for jobs; the partitions' job notifications
//!   (`PartitionHandle::job_notifications`) wake them at once, a probe interval is the fallback.
//!   With a `JobStreams` registry (`Cluster::with_job_streams`, as the node wires it), the
//!   partitions push new jobs to open streams directly (`rpc/stream_activated_jobs.rs`).

pub mod backpressure;
mod cluster;
mod config;
mod dispatch;
mod error;
mod health;
mod jobs;
mod metrics;
pub mod routing;
mod rpc;
mod server;
mod service;
mod validate;

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{broadcast, watch};
use tonic::codec::CompressionEncoding;
use tonic::transport::server::TcpIncoming;

pub use cluster::{Cluster, NodeInfo, PartitionSlot};
pub use config::{DEFAULT_MAX_MESSAGE_SIZE, GatewayConfig};
pub use error::GatewayError;
pub use metrics::GatewayMetrics;

use dispatch::Dispatcher;
use health::HealthService;
use proto::gateway_server::GatewayServer;
use proto::health::health_server::HealthServer;
use server::MessageSizeLayer;
use service::GatewayService;

pub use beeline_gateway_protocol::{code_name, proto};

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

    /// Serves gRPC on `listener` until `shutdown` completes; then stops accepting, ends waiting
    /// calls, lets the calls in flight finish and returns.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), tonic::transport::Error> {
        let config = &self.d.config;
        let max = config.max_message_size;
        // Requests may come gzip-compressed, as grpc-java's server (Zeebe's gateway) accepts
        // them; answers go uncompressed, as grpc-java sends them unless told otherwise.
        let service = GatewayServer::new(GatewayService { d: self.d.clone() })
            .accept_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(max)
            .max_encoding_message_size(max);
        let health = HealthServer::new(HealthService {
            stopping: self.stopping.subscribe(),
        })
        .accept_compressed(CompressionEncoding::Gzip);
        let forwarders = self.forward_job_notifications();
        let signal = async {
            shutdown.await;
            tracing::info!("gRPC gateway stops accepting calls and finishes those in flight");
            self.stop();
        };
        let served = tonic::transport::Server::builder()
            .http2_keepalive_interval(Some(config.keep_alive_interval))
            .http2_keepalive_timeout(Some(std::time::Duration::from_secs(20)))
            .max_concurrent_streams(Some(config.max_concurrent_streams))
            .layer(MessageSizeLayer { max })
            .add_service(service)
            .add_service(health)
            .serve_with_incoming_shutdown(
                TcpIncoming::from(listener).with_nodelay(Some(true)),
                signal,
            )
            .await;
        for forwarder in forwarders {
            forwarder.abort();
        }
        served
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
