/// A failure while processing one command. `Rejected` is the ordinary outcome of a command that
/// may not run; `Internal` is a bug or unexpected state, which rolls the batch back and bans
/// the instance instead of stopping the partition.
#[derive(Debug, thiserror::Error)]
pub enum ProcessingError {
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
