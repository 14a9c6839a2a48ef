//! The one table from what can go wrong (`GatewayError`) to the gRPC status a Zeebe client
//! sees, as Zeebe's gateway answers.
//!
//! | cause | gRPC code | message |
//! |---|---|---|
//! | request field invalid (gateway check) | INVALID_ARGUMENT | names the field |
//! | key names no partition of this cluster | NOT_FOUND | names the field and partition |
//! | tenant the caller is not assigned to | PERMISSION_DENIED | names the request and tenant |
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
//! | free disk space below the minimum for processing | RESOURCE_EXHAUSTED | `... the disk is full ...` |
//! | request larger than the maximum message size | RESOURCE_EXHAUSTED | see `message_size.rs` (grpc-java's code) |
//! | partition stopped or failed, no leader known, leader unreachable: not written (after retries within the request timeout) | UNAVAILABLE | names the partition and why |
//! | gateway shutting down | UNAVAILABLE | |
//! | no answer in time, or the leader died, stepped down or stopped with the command taken: it may have been written | DEADLINE_EXCEEDED | `Time out between gateway and broker: ...` |
//! | engine lacks the processor | UNIMPLEMENTED | `Beeline does not support <what> yet ...` |
//! | answer of an unexpected shape | INTERNAL | `Unexpected error occurred during the request processing: ...` |

use beeline_protocol::RejectionType;
use beeline_stream::PartitionError;
use tonic::{Code, Status};

use crate::error::GatewayError;

pub fn code(error: &GatewayError) -> Code {
    match error {
        GatewayError::InvalidArgument(_) => Code::InvalidArgument,
        GatewayError::NotFound(_) => Code::NotFound,
        GatewayError::PermissionDenied(_) => Code::PermissionDenied,
        GatewayError::Unimplemented(_) => Code::Unimplemented,
        GatewayError::Rejected { rejection, .. } => rejection_code(*rejection),
        GatewayError::Backpressure(_)
        | GatewayError::ForwardingFull { .. }
        | GatewayError::AllPartitionsExhausted
        | GatewayError::JobsExhausted(_) => Code::ResourceExhausted,
        GatewayError::Partition(error) | GatewayError::Refused(error) => match error {
            PartitionError::ResourceExhausted(_)
            | PartitionError::CommandTooLarge { .. }
            | PartitionError::DiskFull { .. } => Code::ResourceExhausted,
            PartitionError::Unavailable { .. } | PartitionError::NotLeader { .. } => {
                Code::Unavailable
            }
            PartitionError::Interrupted { .. } => Code::DeadlineExceeded,
        },
        GatewayError::Unavailable(_) => Code::Unavailable,
        GatewayError::Timeout { .. } => Code::DeadlineExceeded,
        GatewayError::Internal(_) => Code::Internal,
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

pub fn status(error: GatewayError) -> Status {
    Status::new(code(&error), error.message())
}

impl From<GatewayError> for Status {
    fn from(error: GatewayError) -> Self {
        status(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backpressure::Exhausted;
    use crate::error::RESOURCE_EXHAUSTED_PREFIX;
    use beeline_protocol::intent::{JobIntent, MessageIntent};
    use std::time::Duration;

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

        let disk_full: Status = GatewayError::from(PartitionError::DiskFull {
            partition: 2,
            free: 100,
            min_free: 1000,
        })
        .into();
        assert_eq!(disk_full.code(), Code::ResourceExhausted);
        assert!(
            disk_full.message().starts_with(
                "Cannot accept requests for partition 2: the disk is full (100 bytes free"
            ),
            "{}",
            disk_full.message()
        );

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

        let forwarding: Status = GatewayError::ForwardingFull {
            held_kib: 16370,
            limit_kib: 16384,
        }
        .into();
        assert_eq!(forwarding.code(), Code::ResourceExhausted);
        assert!(forwarding.message().starts_with(RESOURCE_EXHAUSTED_PREFIX));
        assert!(forwarding.message().contains("its limit of 16384 KiB"));
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
