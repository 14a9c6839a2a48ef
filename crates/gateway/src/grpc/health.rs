//! The standard gRPC health service (`grpc.health.v1.Health`), as Zeebe's gateway serves it
//! (grpc-java's `HealthStatusManager`): the server as a whole (`""`) and
//! `gateway_protocol.Gateway` are SERVING while the gateway runs and NOT_SERVING once it shuts
//! down; any other service name is unknown (Check: NOT_FOUND, Watch: SERVICE_UNKNOWN).
//! pyzeebe's `healthcheck()` asks about `gateway_protocol.Gateway`.

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::proto::gateway_server::SERVICE_NAME as GATEWAY_SERVICE;
use crate::proto::health::health_check_response::ServingStatus;
use crate::proto::health::health_server::Health;
use crate::proto::health::{HealthCheckRequest, HealthCheckResponse};

pub(crate) struct HealthService {
    /// True once the gateway shuts down.
    pub stopping: watch::Receiver<bool>,
}

/// The status of `service`, or `None` for a service this server does not know.
fn status(service: &str, stopping: bool) -> Option<ServingStatus> {
    if !service.is_empty() && service != GATEWAY_SERVICE {
        return None;
    }
    Some(if stopping {
        ServingStatus::NotServing
    } else {
        ServingStatus::Serving
    })
}

fn answer(status: ServingStatus) -> HealthCheckResponse {
    HealthCheckResponse {
        status: status as i32,
    }
}

#[tonic::async_trait]
impl Health for HealthService {
    async fn check(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        let service = request.into_inner().service;
        match status(&service, *self.stopping.borrow()) {
            Some(status) => Ok(Response::new(answer(status))),
            // grpc-java's text.
            None => Err(Status::not_found(format!("unknown service {service}"))),
        }
    }

    type WatchStream = ReceiverStream<Result<HealthCheckResponse, Status>>;

    /// The status now and after each change. The call ends once the gateway shuts down
    /// (after NOT_SERVING), so that an open watch does not hold up a graceful shutdown.
    async fn watch(
        &self,
        request: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let service = request.into_inner().service;
        let mut stopping = self.stopping.clone();
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(async move {
            loop {
                let stopped = *stopping.borrow_and_update();
                let status = status(&service, stopped);
                if stopped && status.is_none() {
                    return;
                }
                let sent = answer(status.unwrap_or(ServingStatus::ServiceUnknown));
                if tx.send(Ok(sent)).await.is_err() || stopped {
                    return;
                }
                tokio::select! {
                    changed = stopping.changed() => {
                        if changed.is_err() {
                            return;
                        }
                    }
                    () = tx.closed() => return,
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_and_the_gateway_service_are_known() {
        assert_eq!(status("", false), Some(ServingStatus::Serving));
        assert_eq!(
            status("gateway_protocol.Gateway", false),
            Some(ServingStatus::Serving)
        );
        assert_eq!(
            status("gateway_protocol.Gateway", true),
            Some(ServingStatus::NotServing)
        );
        assert_eq!(status("", true), Some(ServingStatus::NotServing));
        assert_eq!(status("grpc.health.v1.Health", false), None);
        assert_eq!(status("gateway_protocol.gateway", false), None);
    }
}
