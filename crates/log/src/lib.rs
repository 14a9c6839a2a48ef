//! The partition log: an append-only journal of entries, each an opaque byte batch with an
//! index (1, 2, 3, ...) and an application sequence number (`asqn`, the position of the first
//! record inside it).
//!
//! Design notes:
//! - **One writer, many readers.** The partition owns the [`Journal`] and appends; readers
//!   (replay, exporters, a Raft follower feed) are independent cursors that only ever see
//!   *committed* entries, so they never observe a write that could still be rolled back.
//! - **Group commit.** [`Journal::append`] writes but does not sync. A [`Flusher`], usable from
//!   another thread while appends go on, makes everything written so far durable with one
//!   `fdatasync` and reports the durable index. The owner then advances the [`CommitIndex`]:
//!   on a single node to the durable index, in a cluster to the quorum index.
//! - **Recovery never hands out a corrupt entry.** Every entry carries a CRC32C. On open, a torn
//!   tail (the entry a crash interrupted) is cut off; damage with intact entries after it is
//!   reported as [`Error::Corrupt`] with file and offset, and the journal refuses to open unless
//!   asked to repair (which keeps everything before the damage).
//!
//! [`FileJournal`] is the durable implementation, [`MemJournal`] the in-memory twin; both pass
//! the same [`conformance`] suite.

pub mod conformance;
mod error;
mod file;
mod journal;
mod mem;

pub use error::{Error, Result};
pub use file::{FileJournal, FileJournalConfig, FileReader, FileReaders, Recovery, RecoveryReport};
pub use journal::{
    CommitIndex, Compaction, Entry, EntryKind, FlushWait, Flusher, Journal, JournalReader,
};
pub use mem::MemJournal;
