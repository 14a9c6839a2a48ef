//! The one table from what can go wrong to the gRPC status a Zeebe client sees.
//!
//! | cause | gRPC code | message |
//! |---|---|---|
//! | request field invalid (gateway check) | INVALID_ARGUMENT | names the field |
//! | key names no partition of this cluster | NOT_FOUND | names the field and partition |
//! | rejection INVALID_ARGUMENT | INVALID_ARGUMENT | `Command '<INTENT>' rejected with code '<TYPE>': <reason>` |
//! | rejection NOT_FOUND | NOT_FOUND | same form |
//! | rejection ALREADY_EXISTS | ALREADY_EXISTS | same form |
//! | rejection INVALID_STATE | FAILED_PRECONDITION | same form |
//! | rejection PROCESSING_ERROR | INTERNAL | same form |
//! | rejection UNAUTHORIZED, FORBIDDEN | PERMISSION_DENIED | same form |
//! | rejection EXCEEDED_BATCH_RECORD_SIZE, other | UNKNOWN | same form (Zeebe's default arm) |
//! | partition's in-flight limit reached | RESOURCE_EXHAUSTED | `Reached maximum capacity of requests handled: ...` |
//! | partition's inbox full | RESOURCE_EXHAUSTED | same prefix |
//! | every partition refused a round-robin command | RESOURCE_EXHAUSTED | Zeebe's `RequestRetriesExhaustedException` text |
//! | no job activated, some partition overloaded | RESOURCE_EXHAUSTED | Zeebe's long-polling text |
//! | command larger than a log entry | RESOURCE_EXHAUSTED | Zeebe's MAX_MESSAGE_SIZE_EXCEEDED mapping |
//! | request larger than the maximum message size | RESOURCE_EXHAUSTED | see `server.rs` (grpc-java's code) |
//! | partition stopped or failed | UNAVAILABLE | names the partition and why |
//! | gateway shutting down | UNAVAILABLE | |
//! | no answer in time | DEADLINE_EXCEEDED | `Time out between gateway and broker: ...` |
//! | engine lacks the processor | UNIMPLEMENTED | `Beeline does not support <what> yet ...` |
//! | answer of an unexpected shape | INTERNAL | `Unexpected error occurred during the request processing: ...` |

use std::time::Duration;

use beeline_protocol::{Intent, RejectionType};
use beeline_stream::PartitionError;
use tonic::{Code, Status};

use crate::backpressure::Exhausted;

/// Zeebe's broker text for a partition over its limit.
pub const RESOURCE_EXHAUSTED_PREFIX: &str = "Reached maximum capacity of requests handled";

/// Zeebe's `RequestRetriesExhaustedException`.
pub const RETRIES_EXHAUSTED: &str = "Expected to execute the command on one of the partitions, \
     but all failed; there are no more partitions available to retry. Please try again. If the \
     error persists contact your zeebe operator";

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GatewayError {
    /// A request field the gateway itself refuses.
    #[error("{0}")]
    InvalidArgument(String),
    /// A key that no partition of this cluster could have made.
    #[error("{0}")]
    NotFound(String),
    /// The engine has no processor for the command this RPC needs.
    #[error("{0}")]
    Unimplemented(String),
    /// The engine rejected the command.
    #[error("Command '{}' rejected with code '{}': {reason}", intent.name(), rejection.name())]
    Rejected {
        intent: Intent,
        rejection: RejectionType,
        reason: String,
    },
    /// The gateway's in-flight limit for the partition is reached.
    #[error(
        "{RESOURCE_EXHAUSTED_PREFIX}: partition {} has {} commands in flight, its current limit; retry after a short back-off",
        .0.partition, .0.inflight
    )]
    Backpressure(Exhausted),
    /// Every partition refused a command that could have gone to any of them.
    #[error("{RETRIES_EXHAUSTED}")]
    AllPartitionsExhausted,
    /// No job was activated and at least one partition was over its limit.
    #[error(
        "Expected to activate jobs of type '{0}', but no jobs available and at least one broker returned 'RESOURCE_EXHAUSTED'. Please try again later."
    )]
    JobsExhausted(String),
    /// The partition answered with an error, or stopped with the command queued.
    #[error("{0}")]
    Partition(PartitionError),
    /// The partition did not take the command (full queue, stopped): it was not written.
    #[error("{0}")]
    Refused(PartitionError),
    #[error(
        "Time out between gateway and broker: no answer from partition {partition} within {}",
        fmt_duration(*after)
    )]
    Timeout { partition: u16, after: Duration },
    #[error("{0}")]
    Unavailable(String),
    #[error("Unexpected error occurred during the request processing: {0}")]
    Internal(String),
}

fn fmt_duration(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

impl GatewayError {
    /// "Beeline does not support <what> yet": an RPC whose engine processor is missing.
    pub fn unsupported(what: &str, intent: Intent) -> Self {
        Self::Unimplemented(format!(
            "Beeline does not support {what} yet (the engine has no processor for {} {} commands)",
            intent.value_type().name(),
            intent.name()
        ))
    }

    /// An RPC the protocol cannot express yet: no record value for its command.
    pub fn not_built(what: &str, value_type: &str, intent: Intent) -> Self {
        Self::Unimplemented(format!(
            "Beeline does not support {what} yet (there is no {value_type} record value for \
             {} {} commands)",
            intent.value_type().name(),
            intent.name()
        ))
    }

    pub fn code(&self) -> Code {
        match self {
            Self::InvalidArgument(_) => Code::InvalidArgument,
            Self::NotFound(_) => Code::NotFound,
            Self::Unimplemented(_) => Code::Unimplemented,
            Self::Rejected { rejection, .. } => rejection_code(*rejection),
            Self::Backpressure(_) | Self::AllPartitionsExhausted | Self::JobsExhausted(_) => {
                Code::ResourceExhausted
            }
            Self::Partition(error) | Self::Refused(error) => match error {
                PartitionError::ResourceExhausted(_) | PartitionError::CommandTooLarge { .. } => {
                    Code::ResourceExhausted
                }
                PartitionError::Unavailable { .. } => Code::Unavailable,
            },
            Self::Unavailable(_) => Code::Unavailable,
            Self::Timeout { .. } => Code::DeadlineExceeded,
            Self::Internal(_) => Code::Internal,
        }
    }

    fn message(&self) -> String {
        match self {
            Self::Partition(error) | Self::Refused(error) => partition_message(error),
            other => other.to_string(),
        }
    }

    /// Whether a command refused with this error was certainly not written, so another
    /// partition may take it.
    pub fn is_retriable_elsewhere(&self) -> bool {
        matches!(self, Self::Backpressure(_) | Self::Refused(_))
    }

    pub fn is_resource_exhausted(&self) -> bool {
        self.code() == Code::ResourceExhausted
    }
}

fn partition_message(error: &PartitionError) -> String {
    match error {
        PartitionError::ResourceExhausted(partition) => format!(
            "{RESOURCE_EXHAUSTED_PREFIX}: the command queue of partition {partition} is full; retry after a short back-off"
        ),
        PartitionError::CommandTooLarge { size, max } => format!(
            "The command takes {size} bytes, more than the {max} bytes a partition writes as \
                 one log entry; send smaller variables or resources"
        ),
        PartitionError::Unavailable { partition, reason } => {
            format!("Cannot accept requests for partition {partition}: {reason}")
        }
    }
}

/// Zeebe's `GrpcErrorMapper.mapRejectionToStatus`.
pub fn rejection_code(rejection: RejectionType) -> Code {
    match rejection {
        RejectionType::InvalidArgument => Code::InvalidArgument,
        RejectionType::NotFound => Code::NotFound,
        RejectionType::AlreadyExists => Code::AlreadyExists,
        RejectionType::InvalidState => Code::FailedPrecondition,
        RejectionType::ProcessingError => Code::Internal,
        RejectionType::Unauthorized | RejectionType::Forbidden => Code::PermissionDenied,
        RejectionType::ExceededBatchRecordSize | RejectionType::NullVal => Code::Unknown,
    }
}

impl From<PartitionError> for GatewayError {
    fn from(error: PartitionError) -> Self {
        Self::Partition(error)
    }
}

impl From<GatewayError> for Status {
    fn from(error: GatewayError) -> Self {
        Status::new(error.code(), error.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::intent::{JobIntent, MessageIntent};

    fn rejected(rejection: RejectionType) -> Status {
        GatewayError::Rejected {
            intent: MessageIntent::Publish.into(),
            rejection,
            reason: "because".into(),
        }
        .into()
    }

    #[test]
    fn rejections_map_as_in_zeebe() {
        for (rejection, code) in [
            (RejectionType::InvalidArgument, Code::InvalidArgument),
            (RejectionType::NotFound, Code::NotFound),
            (RejectionType::AlreadyExists, Code::AlreadyExists),
            (RejectionType::InvalidState, Code::FailedPrecondition),
            (RejectionType::ProcessingError, Code::Internal),
            (RejectionType::Unauthorized, Code::PermissionDenied),
            (RejectionType::Forbidden, Code::PermissionDenied),
            (RejectionType::ExceededBatchRecordSize, Code::Unknown),
            (RejectionType::NullVal, Code::Unknown),
        ] {
            let status = rejected(rejection);
            assert_eq!(status.code(), code, "{rejection:?}");
            assert_eq!(
                status.message(),
                format!(
                    "Command 'PUBLISH' rejected with code '{}': because",
                    rejection.name()
                )
            );
        }
    }

    #[test]
    fn partition_errors_map_to_retriable_codes() {
        let exhausted: Status = GatewayError::from(PartitionError::ResourceExhausted(2)).into();
        assert_eq!(exhausted.code(), Code::ResourceExhausted);
        assert!(exhausted.message().starts_with(RESOURCE_EXHAUSTED_PREFIX));
        assert!(exhausted.message().contains("partition 2"));

        let too_large: Status =
            GatewayError::from(PartitionError::CommandTooLarge { size: 10, max: 5 }).into();
        assert_eq!(too_large.code(), Code::ResourceExhausted);
        assert!(too_large.message().contains("10 bytes"));

        let unavailable: Status = GatewayError::from(PartitionError::Unavailable {
            partition: 3,
            reason: "stopped".into(),
        })
        .into();
        assert_eq!(unavailable.code(), Code::Unavailable);
        assert_eq!(
            unavailable.message(),
            "Cannot accept requests for partition 3: stopped"
        );

        let limited: Status = GatewayError::Backpressure(Exhausted {
            partition: 1,
            inflight: 7,
            limit: 7,
        })
        .into();
        assert_eq!(limited.code(), Code::ResourceExhausted);
        assert!(limited.message().starts_with(RESOURCE_EXHAUSTED_PREFIX));
        assert!(limited.message().contains("7 commands in flight"));
    }

    #[test]
    fn other_errors() {
        let timeout: Status = GatewayError::Timeout {
            partition: 1,
            after: Duration::from_secs(15),
        }
        .into();
        assert_eq!(timeout.code(), Code::DeadlineExceeded);
        assert_eq!(
            timeout.message(),
            "Time out between gateway and broker: no answer from partition 1 within 15s"
        );
        let unsupported: Status =
            GatewayError::unsupported("completing jobs", JobIntent::Complete.into()).into();
        assert_eq!(unsupported.code(), Code::Unimplemented);
        assert_eq!(
            unsupported.message(),
            "Beeline does not support completing jobs yet (the engine has no processor for JOB COMPLETE commands)"
        );
        let all: Status = GatewayError::AllPartitionsExhausted.into();
        assert_eq!(all.code(), Code::ResourceExhausted);
        assert!(all.message().starts_with("Expected to execute the command"));
        let jobs: Status = GatewayError::JobsExhausted("pay".into()).into();
        assert!(jobs.message().contains("jobs of type 'pay'"));
    }
}
