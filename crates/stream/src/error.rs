/// Why a request to a partition did not get an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// The inbox is full: the caller should back off (RESOURCE_EXHAUSTED).
    #[error("partition {0} is overloaded; try again later")]
    ResourceExhausted(u16),
    /// The command alone is larger than one log entry may be.
    #[error("the command takes {size} bytes, more than the maximum of {max} bytes")]
    CommandTooLarge { size: usize, max: usize },
    /// The disk's free space is below the minimum for processing (RESOURCE_EXHAUSTED): the
    /// command was not written.
    #[error(
        "partition {partition} refuses new commands: the disk is full ({free} bytes free, \
         {min_free} needed for processing)"
    )]
    DiskFull {
        partition: u16,
        free: u64,
        min_free: u64,
    },
    /// This replica does not lead the partition: the command was not written. The caller
    /// looks for the leader (`leader`, a node id, when known) and tries again there
    /// (UNAVAILABLE, retriable).
    #[error("partition {partition} is not led by this broker{}", leader.map(|l| format!(" (the leader is broker {l})")).unwrap_or_default())]
    NotLeader { partition: u16, leader: Option<u64> },
    /// The command was written, but its leader lost leadership before the result was
    /// committed: it may or may not take effect (DEADLINE_EXCEEDED, as Zeebe answers then).
    #[error(
        "partition {partition} changed leaders before the command's result was committed; it may or may not take effect: {reason}"
    )]
    Interrupted { partition: u16, reason: String },
    /// The partition is stopped or failed (UNAVAILABLE).
    #[error("partition {partition} is unavailable: {reason}")]
    Unavailable { partition: u16, reason: String },
}

/// Why a partition could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("partition {partition}: log: {source}")]
    Log {
        partition: u16,
        #[source]
        source: beeline_log::Error,
    },
    #[error("partition {partition}: state: {source}")]
    State {
        partition: u16,
        #[source]
        source: beeline_state::Error,
    },
    #[error("partition {partition}: {reason}")]
    Replay { partition: u16, reason: String },
}
