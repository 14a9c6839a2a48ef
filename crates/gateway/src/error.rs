//! What can go wrong with a request, transport-neutral. Each transport has one table from these
//! errors to what its clients see: `grpc/status.rs` (gRPC status codes, as Zeebe's gateway
//! answers) and `rest/problem.rs` (HTTP statuses and problem+json, as Camunda's REST API
//! answers). The messages are the same on both.

use std::time::Duration;

use beeline_protocol::{Intent, RejectionType};
use beeline_stream::PartitionError;

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
    /// The caller may not act for the tenant the request names.
    #[error("{0}")]
    PermissionDenied(String),
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
    /// The commands this broker forwarded to other brokers and awaits the answers of hold
    /// its whole budget for them (`forwarding.rs`).
    #[error(
        "{RESOURCE_EXHAUSTED_PREFIX}: the commands this broker forwarded to partition leaders on other brokers hold {held_kib} KiB, its limit of {limit_kib} KiB; retry after a short back-off"
    )]
    ForwardingFull { held_kib: usize, limit_kib: usize },
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

    /// The message a client reads (gRPC's status message, REST's problem `detail`).
    pub fn message(&self) -> String {
        match self {
            Self::Partition(error) | Self::Refused(error) => partition_message(error),
            other => other.to_string(),
        }
    }

    /// Whether a command refused with this error was certainly not written, so another
    /// partition may take it.
    pub fn is_retriable_elsewhere(&self) -> bool {
        matches!(
            self,
            Self::Backpressure(_) | Self::ForwardingFull { .. } | Self::Refused(_)
        )
    }

    /// Whether the command was certainly not written because its partition's leader is not
    /// (or no longer) where the request went: worth sending again once the topology changes.
    pub fn is_leader_unknown(&self) -> bool {
        matches!(
            self,
            Self::Refused(PartitionError::NotLeader { .. } | PartitionError::Unavailable { .. })
                | Self::Partition(PartitionError::NotLeader { .. })
        )
    }

    /// Whether the cause is load (a limit, a full queue, an oversized command): the client
    /// should retry later, with less.
    pub fn is_resource_exhausted(&self) -> bool {
        match self {
            Self::Backpressure(_)
            | Self::ForwardingFull { .. }
            | Self::AllPartitionsExhausted
            | Self::JobsExhausted(_) => true,
            Self::Partition(error) | Self::Refused(error) => matches!(
                error,
                PartitionError::ResourceExhausted(_)
                    | PartitionError::CommandTooLarge { .. }
                    | PartitionError::DiskFull { .. }
            ),
            _ => false,
        }
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
        PartitionError::DiskFull {
            partition,
            free,
            min_free,
        } => format!(
            "Cannot accept requests for partition {partition}: the disk is full ({free} bytes \
             free on the data directory's file system, {min_free} needed for processing); \
             snapshots and compaction go on, and requests are accepted again once there is room"
        ),
        PartitionError::Unavailable { partition, reason } => {
            format!("Cannot accept requests for partition {partition}: {reason}")
        }
        PartitionError::NotLeader { .. } => format!("{error}; retry on its leader"),
        PartitionError::Interrupted { partition, reason } => format!(
            "Time out between gateway and broker: partition {partition} changed leaders \
             before the command's result was committed; it may or may not take effect ({reason})"
        ),
    }
}

impl From<PartitionError> for GatewayError {
    fn from(error: PartitionError) -> Self {
        Self::Partition(error)
    }
}
