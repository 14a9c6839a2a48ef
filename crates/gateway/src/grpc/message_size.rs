//! The HTTP/2 server around the service: message size limit, keep-alive, concurrency per
//! connection, and graceful shutdown.
//!
//! A request larger than the maximum message size is refused by tonic's decoder before it is
//! buffered, with OUT_OF_RANGE and a terse text. [`MessageSizeLayer`] turns that answer into
//! what a Zeebe gateway (grpc-java) says, RESOURCE_EXHAUSTED, with a message that tells the
//! sender what to change.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::{Code, Status};
use tower_layer::Layer;
use tower_service::Service;

/// tonic's text for a message over `max_decoding_message_size`.
const TONIC_TOO_LARGE: &str = "Error, decoded message length too large";

#[derive(Debug, Clone, Copy)]
pub(crate) struct MessageSizeLayer {
    pub max: usize,
}

impl<S> Layer<S> for MessageSizeLayer {
    type Service = MessageSize<S>;

    fn layer(&self, inner: S) -> Self::Service {
        MessageSize {
            inner,
            max: self.max,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct MessageSize<S> {
    inner: S,
    max: usize,
}

impl<S, B, ResBody> Service<http::Request<B>> for MessageSize<S>
where
    S: Service<http::Request<B>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<ResBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let max = self.max;
        let path = request.uri().path().to_owned();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let mut response = answer.await?;
            if let Some(status) = too_large(response.headers(), max) {
                tracing::debug!(%path, message = status.message(), "request over the maximum message size");
                let headers = response.headers_mut();
                headers.remove("grpc-status");
                headers.remove("grpc-message");
                headers.remove("grpc-status-details-bin");
                let _ = status.add_header(headers);
            }
            Ok(response)
        })
    }
}

/// The status to answer instead, when `headers` carry tonic's "message too large" error.
fn too_large(headers: &http::HeaderMap, max: usize) -> Option<Status> {
    let status = Status::from_header_map(headers)?;
    if status.code() != Code::OutOfRange || !status.message().starts_with(TONIC_TOO_LARGE) {
        return None;
    }
    let size = status
        .message()
        .split("found ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<u64>().ok());
    let size = size.map_or_else(|| "larger".to_owned(), |n| format!("{n} bytes,"));
    Some(Status::resource_exhausted(format!(
        "The request is {size} more than the gateway's maximum message size of {max} bytes; \
         send less data (smaller variables or resources), or raise the limit \
         (--grpc-max-message-size / BEELINE_GRPC_MAX_MESSAGE_SIZE)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tonic_size_errors_become_resource_exhausted() {
        let mut headers = http::HeaderMap::new();
        Status::out_of_range(
            "Error, decoded message length too large: found 5000000 bytes, the limit is: 4194304 bytes",
        )
        .add_header(&mut headers)
        .unwrap();
        let status = too_large(&headers, 4_194_304).unwrap();
        assert_eq!(status.code(), Code::ResourceExhausted);
        assert!(
            status.message().starts_with(
                "The request is 5000000 bytes, more than the gateway's maximum message size of 4194304 bytes"
            ),
            "{}",
            status.message()
        );
    }

    #[test]
    fn other_statuses_pass() {
        let mut headers = http::HeaderMap::new();
        Status::out_of_range("something else")
            .add_header(&mut headers)
            .unwrap();
        assert!(too_large(&headers, 10).is_none());
        assert!(too_large(&http::HeaderMap::new(), 10).is_none());
    }
}
