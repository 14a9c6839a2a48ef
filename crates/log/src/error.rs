use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("journal I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Damage that is not a torn tail: intact entries follow it, or a sealed segment is broken.
    /// Serving past it would hand out wrong data, so the journal refuses to open.
    #[error("journal corrupt in {path} at offset {offset}: {reason}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    #[error("entry of {size} bytes exceeds the maximum entry size of {max} bytes")]
    EntryTooLarge { size: usize, max: usize },
    #[error("a normal entry needs data (only blank and membership entries may be empty)")]
    EmptyEntry,
    #[error("asqn {asqn} must be greater than the last asqn {last}")]
    AsqnNotIncreasing { asqn: u64, last: u64 },
    #[error("term {term} is below the last entry's term {last}")]
    TermDecreasing { term: u64, last: u64 },
    #[error(
        "cannot reset the journal to continue at index {next}: entries up to {commit} are committed"
    )]
    ResetCommitted { next: u64, commit: u64 },
    #[error("cannot truncate after index {index}: entries up to {commit} are committed")]
    TruncateCommitted { index: u64, commit: u64 },
    /// An earlier write failed and could not be undone; the journal accepts no more writes
    /// until it is reopened (recovery then decides what is intact).
    #[error("journal is failed after an earlier write error: {0}")]
    Failed(String),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
