use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("state store error: {0}")]
    Store(String),
    #[error("state I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A snapshot whose files do not match its manifest: restoring it would serve wrong state.
    #[error("snapshot corrupt: {path} at offset {offset}: {reason}")]
    CorruptSnapshot {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    /// A stored key or value that does not decode: state written by another version, or damage.
    #[error("undecodable state in column family {cf}: {reason}")]
    Decode { cf: &'static str, reason: String },
    /// State in a format version this build does not read, or cannot convert soundly.
    #[error(
        "state in {path} has format version {found}; this build reads version {expected}: {action}"
    )]
    Format {
        path: PathBuf,
        found: u32,
        expected: u32,
        action: String,
    },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
