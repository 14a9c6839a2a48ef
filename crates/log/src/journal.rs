//! The storage contract every log implementation keeps (file, memory, and later Raft).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::watch;

use crate::Result;

/// One journal entry: an opaque batch of bytes with its index and application sequence number,
/// and the Raft term and kind it was written with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based, dense: entry `n + 1` follows entry `n`.
    pub index: u64,
    /// The Raft term of the leader that wrote the entry; 0 on a node that is no Raft member.
    /// Never decreases from one entry to the next.
    pub term: u64,
    pub kind: EntryKind,
    /// Strictly increasing across normal entries; the partition stores the position of the
    /// first record of the batch here, so readers can seek by record position. Entries of
    /// other kinds carry the asqn of the entry before them (0 when there is none).
    pub asqn: u64,
    pub data: Vec<u8>,
}

/// What an entry holds. Stable numbers: they are written in every frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EntryKind {
    /// A batch of records (the only kind a single node writes).
    Normal = 0,
    /// A Raft leader's first entry of its term; no records.
    Blank = 1,
    /// A Raft membership change; its data is the cluster layer's, no records.
    Membership = 2,
}

impl EntryKind {
    pub fn from_u8(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(Self::Normal),
            1 => Some(Self::Blank),
            2 => Some(Self::Membership),
            _ => None,
        }
    }

    /// Whether the entry's data is a batch of records (readers of records skip the others).
    pub fn carries_records(self) -> bool {
        matches!(self, Self::Normal)
    }
}

/// The storage contract of a partition log.
///
/// - Indices start at 1 (or where [`reset`](Journal::reset) put them) and are dense. An empty journal has `first_index() == 1` and
///   `last_index() == 0`; after compaction `first_index()` is the oldest entry kept.
/// - [`append`](Journal::append) writes an entry; it is neither durable nor visible to readers
///   until flushed and committed.
/// - Readers see exactly the entries with `index <= commit_index`, never more.
/// - Entries at or below the commit index are never truncated.
/// - On reopen, every entry that a flush reported durable is still there, unchanged.
pub trait Journal: Send + 'static {
    type Reader: JournalReader;
    type Flusher: Flusher;

    /// Appends `data` as the next normal entry of term 0 and returns its index: what a node
    /// that is no Raft member writes.
    fn append(&mut self, asqn: u64, data: &[u8]) -> Result<u64> {
        self.append_entry(0, EntryKind::Normal, asqn, data)
    }
    /// Appends an entry of `kind` and `term` and returns its index. A normal entry needs data
    /// and an asqn above the last one; other kinds take the last entry's asqn (`asqn` is
    /// ignored) and may be empty. The term never decreases.
    fn append_entry(&mut self, term: u64, kind: EntryKind, asqn: u64, data: &[u8]) -> Result<u64>;
    /// The oldest entry still held (`last_index() + 1` when empty).
    fn first_index(&self) -> u64;
    /// The newest entry written (0 when nothing was ever written).
    fn last_index(&self) -> u64;
    /// The asqn of the newest entry, if any.
    fn last_asqn(&self) -> Option<u64>;
    /// The term of the newest entry (0 when there is none).
    fn last_term(&self) -> u64;
    /// A handle that syncs written entries to stable storage, usable from another thread.
    fn flusher(&self) -> Self::Flusher;
    /// The end of a turn of appends: what was appended since the last call is handed on
    /// together. A replicated journal proposes it to its group as one write (one round of
    /// replication, one sync on each follower, instead of one per entry); a file journal
    /// writes on append and has nothing to do. [`flusher`](Journal::flusher) hands on what
    /// is still kept as well.
    fn submit(&mut self) -> Result<()> {
        Ok(())
    }
    /// The commit watermark shared with every reader of this journal.
    fn commit_index(&self) -> Arc<CommitIndex>;
    /// A new reader of committed entries, positioned at the first entry.
    fn reader(&self) -> Self::Reader;
    /// A new reader of every appended entry, committed or not, durable or not, positioned at
    /// the first entry: what a Raft leader replicates from. Entries it has read can be
    /// truncated afterwards (a replicated log's conflict resolution); the Raft layer knows when.
    fn log_reader(&self) -> Self::Reader;
    /// Removes every entry after `index` (a replicated log's conflict resolution).
    fn truncate_after(&mut self, index: u64) -> Result<()>;
    /// Allows removing entries below `index`; implementations free whole segments only,
    /// so entries below `index` may survive, but `index` itself always does. The entries are
    /// gone from the journal at once; the returned [`Compaction`] deletes their files.
    fn compact(&mut self, index: u64) -> Result<Compaction>;
    /// Removes every entry and continues at `next_index`: what a replica does when a snapshot
    /// covers everything before `next_index` (its own entries included). The commit index
    /// moves to `next_index - 1`; entries above the commit index may go, committed ones may
    /// not unless the snapshot covers them (`next_index` above the commit index).
    fn reset(&mut self, next_index: u64) -> Result<()>;
}

/// Files a compaction took out of the journal, still to be deleted. Deleting large files can
/// take a while (the file system frees their blocks), so the caller may run
/// [`finish`](Compaction::finish) away from its hot path. Dropped unfinished, it deletes them
/// then.
///
/// Files go oldest first and stop at the first failure, so what stays on disk is always a
/// contiguous run of segments that recovery can read.
///
/// [`finish`](Compaction::finish) frees a file's blocks a step at a time before the name goes:
/// a 128 MiB segment unlinked at once frees all its blocks in one go of the file system's
/// journal, and every log sync on the disk waits behind it (three brokers at 1,640
/// instances/s: a 60 s p99 of 32.1 and 34.1 ms with segments unlinked at once, 20.4 and 24.4
/// ms freed in steps; docs/benchmarks.md, "The journals' syncs").
#[must_use = "dropping a compaction deletes its files on the spot"]
#[derive(Default)]
pub struct Compaction {
    /// Oldest first: the file, and what keeps it open until it is deleted.
    files: VecDeque<(PathBuf, Box<dyn Held>)>,
}

/// What keeps a compacted file open until it is deleted.
pub(crate) trait Held: Send {
    /// Whether anything else still reads the file (a reader that held it when it was
    /// compacted): it must keep its contents until that reader lets go.
    fn read_elsewhere(&self) -> bool;
}

impl<T: Send + Sync> Held for std::sync::Arc<T> {
    fn read_elsewhere(&self) -> bool {
        std::sync::Arc::strong_count(self) > 1
    }
}

/// Blocks freed at a time when a compacted file is deleted in steps.
const FREE_STEP: u64 = 8 << 20;

/// The pause after each step: a 128 MiB segment goes in about 40 ms.
const FREE_PAUSE: std::time::Duration = std::time::Duration::from_millis(2);

/// The name a compacted file takes while its blocks are freed: out of the journal at once
/// (recovery never reads it), removed when the journal opens if a crash left it.
pub(crate) fn being_deleted(path: &std::path::Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{BEING_DELETED}{name}"))
}

/// The prefix of [`being_deleted`] names.
pub(crate) const BEING_DELETED: &str = "deleting-";

impl Compaction {
    pub(crate) fn push(&mut self, path: PathBuf, open: Box<dyn Held>) {
        self.files.push_back((path, open));
    }

    /// Nothing to delete.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Deletes the files, oldest first, each one's blocks freed a step at a time (unless a
    /// reader still holds it or it has another name). A file already gone counts as deleted. Blocks its thread for
    /// about 40 ms per 128 MiB: run it where that does not matter.
    pub fn finish(mut self) -> Result<()> {
        self.delete(true)
    }

    fn delete(&mut self, in_steps: bool) -> Result<()> {
        while let Some((path, open)) = self.files.pop_front() {
            let deleted = if in_steps && !open.read_elsewhere() {
                delete_in_steps(&path)
            } else {
                std::fs::remove_file(&path)
            };
            match deleted {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    // Keep the rest: deleting newer files past a failure would leave a gap.
                    self.files.clear();
                    return Err(crate::Error::io(&path, e));
                }
            }
            // The blocks are freed once the last handle on the unlinked file closes.
            drop(open);
            tracing::debug!(path = %path.display(), "compacted journal segment");
        }
        Ok(())
    }
}

/// Takes `path` out of the journal (renamed), frees its blocks a step at a time from the end,
/// then removes it. A file with another name besides (a hard link: a backup's, or a chaos
/// run's archive) keeps its contents: only the name goes, its blocks stay with the other.
fn delete_in_steps(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let renamed = being_deleted(path);
    std::fs::rename(path, &renamed)?;
    let file = std::fs::OpenOptions::new().write(true).open(&renamed)?;
    let meta = file.metadata()?;
    let mut len = if meta.nlink() > 1 { 0 } else { meta.len() };
    while len > 0 {
        len = len.saturating_sub(FREE_STEP);
        file.set_len(len)?;
        if len > 0 {
            std::thread::sleep(FREE_PAUSE);
        }
    }
    drop(file);
    std::fs::remove_file(&renamed)
}

impl Drop for Compaction {
    fn drop(&mut self) {
        if let Err(error) = self.delete(false) {
            tracing::warn!(%error, "cannot delete a compacted journal segment");
        }
    }
}

/// Makes what was appended so far durable.
pub trait Flusher: Clone + Send + Sync + 'static {
    /// Syncs every entry written before the call; returns the highest durable index.
    fn flush(&self) -> Result<u64>;

    /// [`flush`](Flusher::flush) as a future, for a flusher that only waits (a replicated
    /// journal waits for its group's commit, which other tasks bring about): its caller awaits
    /// it on its own task instead of handing a blocking call to a thread. `None`: the flush
    /// blocks (a file journal's sync); call `flush` where blocking is allowed.
    fn wait(&self) -> Option<FlushWait> {
        None
    }
}

/// A flush that is only a wait (see [`Flusher::wait`]).
pub type FlushWait = std::pin::Pin<Box<dyn std::future::Future<Output = Result<u64>> + Send>>;

/// A cursor over committed entries.
pub trait JournalReader: Send + 'static {
    /// The next call to [`next`](JournalReader::next) returns entry `index`, or the first entry
    /// held when `index` was compacted away.
    fn seek(&mut self, index: u64) -> Result<()>;
    /// Positions at the last entry whose asqn is `<= asqn` (the entry that holds that record
    /// position), or at the first entry when every asqn is greater.
    fn seek_to_asqn(&mut self, asqn: u64) -> Result<()>;
    /// The next committed entry, `None` when the reader has caught up with the commit index.
    fn next_entry(&mut self) -> Option<Result<Entry>>;
}

/// The highest committed index, shared between the writer and every reader. Committing wakes
/// whoever waits for new entries.
#[derive(Debug)]
pub struct CommitIndex {
    value: AtomicU64,
    changes: watch::Sender<u64>,
}

impl CommitIndex {
    pub fn new(initial: u64) -> Arc<Self> {
        Arc::new(Self {
            value: AtomicU64::new(initial),
            changes: watch::Sender::new(initial),
        })
    }

    pub fn get(&self) -> u64 {
        self.value.load(Ordering::Acquire)
    }

    /// Raises the watermark; a lower value is ignored (the commit index never goes back).
    pub fn advance(&self, index: u64) {
        let previous = self.value.fetch_max(index, Ordering::AcqRel);
        if index > previous {
            self.changes.send_replace(index);
        }
    }

    /// A receiver that changes whenever the watermark advances.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}
