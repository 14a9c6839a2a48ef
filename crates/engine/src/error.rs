/// A failure while processing one command. `Internal` is a bug or unexpected state, which
/// rolls the batch back and bans the instance instead of stopping the partition.
#[derive(Debug, thiserror::Error)]
pub enum ProcessingError {
    /// The command may not run, found out after it wrote events (an all-or-nothing command
    /// such as a modification): the batch is rolled back and the command rejected, and
    /// nothing is banned (Zeebe's expected errors). Only the batch's own command may end so.
    #[error("{1}")]
    Rejected(beeline_protocol::RejectionType, String),
    #[error("{0}")]
    Internal(String),
    #[error(transparent)]
    State(#[from] beeline_state::Error),
}

/// A failure the partition cannot process past: state can no longer be read or written.
#[derive(Debug, thiserror::Error)]
#[error("fatal engine error: {0}")]
pub struct FatalError(pub String);

impl From<beeline_state::Error> for FatalError {
    fn from(e: beeline_state::Error) -> Self {
        FatalError(e.to_string())
    }
}
