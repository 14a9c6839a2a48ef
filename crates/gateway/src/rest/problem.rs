//! The one table from what can go wrong (`GatewayError`) to the HTTP status and RFC 9457
//! problem (`application/problem+json`) a REST client sees, as Camunda's REST API answers:
//! `title` is the rejection type or the status name, `detail` the message, `instance` the
//! request path.
//!
//! | cause | HTTP | title |
//! |---|---|---|
//! | request field invalid (gateway check), body not JSON or of the wrong shape | 400 | INVALID_ARGUMENT |
//! | key names no partition of this cluster | 404 | NOT_FOUND |
//! | tenant the caller is not assigned to | 403 | FORBIDDEN |
//! | rejection INVALID_ARGUMENT | 400 | INVALID_ARGUMENT |
//! | rejection NOT_FOUND | 404 | NOT_FOUND |
//! | rejection ALREADY_EXISTS, INVALID_STATE | 409 | the rejection type |
//! | rejection UNAUTHORIZED / FORBIDDEN | 401 / 403 | the rejection type |
//! | rejection PROCESSING_ERROR, EXCEEDED_BATCH_RECORD_SIZE, other | 500 | the rejection type |
//! | partition's in-flight limit, inbox full, every partition refused, no job and some partition overloaded | 503 | RESOURCE_EXHAUSTED |
//! | free disk space below the minimum for processing | 503 | RESOURCE_EXHAUSTED (the detail says the disk is full) |
//! | command larger than a log entry | 400 | INVALID_ARGUMENT (it will never fit: not worth a retry) |
//! | request body larger than the maximum message size | 413 | PAYLOAD_TOO_LARGE |
//! | partition stopped or failed, gateway shutting down | 503 | UNAVAILABLE |
//! | no answer in time | 504 | DEADLINE_EXCEEDED |
//! | engine lacks the processor, operation not built yet | 501 | UNIMPLEMENTED |
//! | answer of an unexpected shape | 500 | INTERNAL |
//! | no such endpoint / method | 404 / 405 | NOT_FOUND / METHOD_NOT_ALLOWED |

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use beeline_protocol::RejectionType;
use beeline_stream::PartitionError;
use serde::Serialize;

use crate::error::GatewayError;

/// A refused request, before it knows its path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub status: StatusCode,
    pub title: &'static str,
    pub detail: String,
}

impl Problem {
    pub fn new(status: StatusCode, title: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            title,
            detail: detail.into(),
        }
    }

    pub fn invalid(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", detail)
    }

    /// The problem+json response for the request at `path`.
    pub fn at(self, path: &str) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            r#type: &'static str,
            title: &'static str,
            status: u16,
            detail: &'a str,
            instance: &'a str,
        }
        let body = serde_json::to_vec(&Body {
            r#type: "about:blank",
            title: self.title,
            status: self.status.as_u16(),
            detail: &self.detail,
            instance: path,
        })
        .unwrap_or_default();
        let mut response = (self.status, body).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        response
    }
}

impl From<GatewayError> for Problem {
    fn from(error: GatewayError) -> Self {
        let (status, title) = match &error {
            GatewayError::InvalidArgument(_) => (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
            GatewayError::NotFound(_) => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            GatewayError::PermissionDenied(_) => (StatusCode::FORBIDDEN, "FORBIDDEN"),
            GatewayError::Unimplemented(_) => (StatusCode::NOT_IMPLEMENTED, "UNIMPLEMENTED"),
            GatewayError::Rejected { rejection, .. } => {
                (rejection_status(*rejection), rejection.name())
            }
            GatewayError::Backpressure(_)
            | GatewayError::ForwardingFull { .. }
            | GatewayError::AllPartitionsExhausted
            | GatewayError::JobsExhausted(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "RESOURCE_EXHAUSTED")
            }
            GatewayError::Partition(error) | GatewayError::Refused(error) => match error {
                PartitionError::ResourceExhausted(_) | PartitionError::DiskFull { .. } => {
                    (StatusCode::SERVICE_UNAVAILABLE, "RESOURCE_EXHAUSTED")
                }
                PartitionError::CommandTooLarge { .. } => {
                    (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT")
                }
                PartitionError::Unavailable { .. } | PartitionError::NotLeader { .. } => {
                    (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE")
                }
                PartitionError::Interrupted { .. } => {
                    (StatusCode::GATEWAY_TIMEOUT, "DEADLINE_EXCEEDED")
                }
            },
            GatewayError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE"),
            GatewayError::Timeout { .. } => (StatusCode::GATEWAY_TIMEOUT, "DEADLINE_EXCEEDED"),
            GatewayError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
        };
        Problem::new(status, title, error.message())
    }
}

/// Camunda's `RestErrorMapper` for broker rejections.
pub(crate) fn rejection_status(rejection: RejectionType) -> StatusCode {
    match rejection {
        RejectionType::InvalidArgument => StatusCode::BAD_REQUEST,
        RejectionType::NotFound => StatusCode::NOT_FOUND,
        RejectionType::AlreadyExists | RejectionType::InvalidState => StatusCode::CONFLICT,
        RejectionType::Unauthorized => StatusCode::UNAUTHORIZED,
        RejectionType::Forbidden => StatusCode::FORBIDDEN,
        RejectionType::ProcessingError
        | RejectionType::ExceededBatchRecordSize
        | RejectionType::NullVal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backpressure::Exhausted;
    use beeline_protocol::intent::JobIntent;
    use std::time::Duration;

    fn problem(error: GatewayError) -> (u16, &'static str, String) {
        let p = Problem::from(error);
        (p.status.as_u16(), p.title, p.detail)
    }

    #[test]
    fn rejections_keep_their_type_as_title() {
        for (rejection, status) in [
            (RejectionType::InvalidArgument, 400),
            (RejectionType::NotFound, 404),
            (RejectionType::AlreadyExists, 409),
            (RejectionType::InvalidState, 409),
            (RejectionType::Unauthorized, 401),
            (RejectionType::Forbidden, 403),
            (RejectionType::ProcessingError, 500),
            (RejectionType::ExceededBatchRecordSize, 500),
        ] {
            let (code, title, detail) = problem(GatewayError::Rejected {
                intent: JobIntent::Complete.into(),
                rejection,
                reason: "because".into(),
            });
            assert_eq!(code, status, "{rejection:?}");
            assert_eq!(title, rejection.name());
            assert_eq!(
                detail,
                format!(
                    "Command 'COMPLETE' rejected with code '{}': because",
                    rejection.name()
                )
            );
        }
    }

    #[test]
    fn load_is_503_resource_exhausted_and_waiting_too_long_504() {
        let (code, title, detail) = problem(GatewayError::Backpressure(Exhausted {
            partition: 1,
            inflight: 3,
            limit: 3,
        }));
        assert_eq!((code, title), (503, "RESOURCE_EXHAUSTED"));
        assert!(detail.starts_with("Reached maximum capacity of requests handled"));
        let (code, title, _) = problem(PartitionError::ResourceExhausted(2).into());
        assert_eq!((code, title), (503, "RESOURCE_EXHAUSTED"));
        let (code, title, _) = problem(GatewayError::ForwardingFull {
            held_kib: 10,
            limit_kib: 16,
        });
        assert_eq!((code, title), (503, "RESOURCE_EXHAUSTED"));
        let (code, title, _) = problem(GatewayError::Timeout {
            partition: 1,
            after: Duration::from_secs(1),
        });
        assert_eq!((code, title), (504, "DEADLINE_EXCEEDED"));
        let (code, title, _) = problem(
            PartitionError::Unavailable {
                partition: 1,
                reason: "stopped".into(),
            }
            .into(),
        );
        assert_eq!((code, title), (503, "UNAVAILABLE"));
        let (code, _, _) = problem(PartitionError::CommandTooLarge { size: 9, max: 1 }.into());
        assert_eq!(code, 400);
        let (code, title, detail) = problem(
            PartitionError::DiskFull {
                partition: 1,
                free: 5,
                min_free: 10,
            }
            .into(),
        );
        assert_eq!((code, title), (503, "RESOURCE_EXHAUSTED"));
        assert!(detail.contains("the disk is full"), "{detail}");
        let (code, title, _) = problem(GatewayError::Unimplemented("x".into()));
        assert_eq!((code, title), (501, "UNIMPLEMENTED"));
    }

    #[tokio::test]
    async fn the_body_is_problem_json_naming_the_path() {
        let response = Problem::invalid("No type provided").at("/v2/jobs/activation");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "application/problem+json"
        );
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "type": "about:blank",
                "title": "INVALID_ARGUMENT",
                "status": 400,
                "detail": "No type provided",
                "instance": "/v2/jobs/activation"
            })
        );
    }
}
