//! The gRPC transport: Zeebe's `gateway_protocol.Gateway` service (tonic) and the standard
//! health service, on one HTTP/2 server.
//!
//! ```text
//! client ─gRPC─▶ service.rs ─▶ <method>.rs: proto request → operation request
//!                                 operations::<op>::run (validate, route, send, read the answer)
//!                              ◀─ <method>.rs: operation result → proto response
//!                                 status.rs: GatewayError → gRPC status (the one table)
//! ```
//!
//! The server (`serve`): maximum message size (`message_size.rs` turns tonic's answer into
//! grpc-java's), HTTP/2 keep-alive, concurrent streams per connection, gzip requests, and a
//! graceful shutdown: stop accepting, end waiting calls, finish those in flight.

mod activate_jobs;
mod broadcast_signal;
mod cancel_process_instance;
mod complete_job;
mod create_process_instance;
mod delete_resource;
mod deploy_resource;
mod evaluate_decision;
mod fail_job;
mod health;
mod message_size;
mod modify_process_instance;
mod publish_message;
mod resolve_incident;
mod service;
mod set_variables;
mod status;
mod throw_error;
mod topology;
mod unsupported;
mod update_job;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tonic::codec::CompressionEncoding;
use tonic::transport::server::TcpIncoming;

use crate::auth::{Authenticator, GrpcAuthLayer};
use crate::dispatch::Dispatcher;
use crate::proto::gateway_server::GatewayServer;
use crate::proto::health::health_server::HealthServer;
use crate::tls::TlsIncoming;
use health::HealthService;
use message_size::MessageSizeLayer;
use service::GatewayService;

/// Serves gRPC on `listener` until `shutdown` completes; then stops accepting and lets the
/// calls in flight finish.
pub(crate) async fn serve(
    d: Arc<Dispatcher>,
    listener: tokio::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    auth: Arc<Authenticator>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), tonic::transport::Error> {
    let config = &d.config;
    let max = config.max_message_size;
    let keep_alive = config.keep_alive_interval;
    let streams = config.max_concurrent_streams;
    // Requests may come gzip-compressed, as grpc-java's server (Zeebe's gateway) accepts
    // them; answers go uncompressed, as grpc-java sends them unless told otherwise.
    let health = HealthServer::new(HealthService {
        stopping: d.stopping.clone(),
    })
    .accept_compressed(CompressionEncoding::Gzip);
    let service = GatewayServer::new(GatewayService { d })
        .accept_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(max)
        .max_encoding_message_size(max);
    let server = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(keep_alive))
        .http2_keepalive_timeout(Some(Duration::from_secs(20)))
        .max_concurrent_streams(Some(streams))
        .layer(MessageSizeLayer { max })
        .layer(GrpcAuthLayer(auth))
        .add_service(service)
        .add_service(health);
    match tls {
        Some(tls) => {
            server
                .serve_with_incoming_shutdown(TlsIncoming::new(listener, tls), shutdown)
                .await
        }
        None => {
            let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
            server
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
        }
    }
}
