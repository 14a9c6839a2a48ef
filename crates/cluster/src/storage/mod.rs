//! The partition journal as openraft's log storage.
//!
//! - **Appends** write the entries into the journal at once (readable by the replication
//!   reader, not yet durable) and hand openraft's callback to the node's flusher
//!   ([`NodeFlusher`]), which syncs each group's journal one sync at a time: one `fdatasync`
//!   covers everything a journal queued meanwhile, and the callbacks complete in order (group
//!   commit, as the single node does).
//! - **Ordering**: a vote, a truncation and a purge first drain the journal's flush queue, so
//!   what reaches the disk is in the order openraft issued it (`docs/protocol/io_ordering.md` in
//!   openraft shows how a vote overtaking an append loses a committed entry).
//! - **Truncation** of a conflicting tail is the journal's `truncate_after`; an append past
//!   the end of an empty journal (a snapshot covered everything before it) is the journal's
//!   `reset`.
//! - **Purge** is logical first: the purge mark is synced and entries at or below it are no
//!   longer served. Segment files are freed only below the compaction floor as well, which the
//!   partition keeps at its snapshot and its slowest exporter (design.md: the log is compacted
//!   below min(snapshot position, slowest exporter position)), so exporters keep what they
//!   still need even after Raft has purged it.
//! - **Reads** for replication (and for openraft's apply, which reads every committed entry
//!   back) are served from the entries appended last, kept in memory up to a bound
//!   ([`recent`]); older ones go through the journal's log reader, which sees entries
//!   appended but neither flushed nor committed. The partition's own readers (replay,
//!   exporters) take what is kept from there too ([`ReplicaReader`]).

mod flusher;
mod meta;
mod reader;
mod recent;

use std::fmt::Debug;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use beeline_log::{Journal, JournalReader};
pub use flusher::{FlushCounts, NodeFlusher};
pub use meta::{MetaDir, SnapshotRecord};
use openraft::entry::RaftEntry;
use openraft::storage::{IOFlushed, RaftLogStorage};
use openraft::{LogState, RaftLogReader};
pub use reader::{ReplicaReader, ReplicaReaders};

use flusher::JournalFlush;
use recent::RecentEntries;

use crate::types::{Entry, LogId, TypeConfig, Vote, from_journal, is_void, journal_parts, log_id};

/// The journal index below which segment files may be freed, kept by the partition at
/// min(snapshot, slowest exporter). `u64::MAX`: nothing holds compaction back.
#[derive(Debug, Clone)]
pub struct CompactionFloor(Arc<AtomicU64>);

impl CompactionFloor {
    pub fn new(index: u64) -> Self {
        Self(Arc::new(AtomicU64::new(index)))
    }

    pub fn set(&self, index: u64) {
        self.0.store(index, Ordering::Release);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// The lowest journal index a void batch was stored at ([`crate::types::is_void`]) since the
/// leader's current term began, `u64::MAX` for none: the store marks it as it appends, before
/// the entry can be replicated or committed, and the term's flushes fail from there on.
#[derive(Debug, Clone)]
pub struct Voids(Arc<AtomicU64>);

impl Default for Voids {
    fn default() -> Self {
        Self(Arc::new(AtomicU64::new(u64::MAX)))
    }
}

impl Voids {
    /// A leader's term begins: no void of it yet.
    pub fn reset(&self) {
        self.0.store(u64::MAX, Ordering::Release);
    }

    fn mark(&self, index: u64) {
        self.0.fetch_min(index, Ordering::AcqRel);
    }

    /// The lowest index voided since the last [`reset`](Self::reset).
    pub fn first(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// What the store and its readers share.
#[derive(Debug)]
struct Shared {
    vote: Mutex<Option<Vote>>,
    purged: Mutex<Option<LogId>>,
    recent: Arc<RecentEntries>,
    voids: Voids,
}

impl Shared {
    fn purged(&self) -> Option<LogId> {
        *self.purged.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn vote(&self) -> Option<Vote> {
        *self.vote.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A partition journal as openraft's [`RaftLogStorage`].
pub struct JournalLogStore<J: Journal> {
    journal: J,
    meta: MetaDir,
    shared: Arc<Shared>,
    flush: JournalFlush,
    floor: CompactionFloor,
}

impl<J: Journal + Sync> JournalLogStore<J>
where
    J::Reader: Sync,
{
    /// The bound on the entries kept for replication of [`open`](Self::open): what a group
    /// appends in a few milliseconds at full load.
    pub const RECENT_ENTRIES: usize = 1 << 20;

    /// Wraps `journal` (opened with `commit_recovered: false` for a file journal), with its Raft
    /// records in `meta_dir`; `flusher` makes its appends durable. Keeps up to
    /// [`RECENT_ENTRIES`](Self::RECENT_ENTRIES) bytes of the latest entries for replication.
    pub fn open(
        journal: J,
        meta_dir: &Path,
        floor: CompactionFloor,
        flusher: &NodeFlusher,
    ) -> io::Result<Self> {
        Self::open_keeping(journal, meta_dir, floor, flusher, Self::RECENT_ENTRIES)
    }

    /// [`open`](Self::open), keeping up to `recent` bytes of the latest entries appended in
    /// memory to replicate (and apply) them from; 0 reads every entry from the journal.
    pub fn open_keeping(
        mut journal: J,
        meta_dir: &Path,
        floor: CompactionFloor,
        flusher: &NodeFlusher,
        recent: usize,
    ) -> io::Result<Self> {
        let meta = MetaDir::new(meta_dir)?;
        let vote = meta.read_vote()?;
        let purged = meta.read_purged()?;
        if let Some(purged) = purged {
            // Journal index of the first entry after the purge mark.
            let next = purged.index + 2;
            let empty = journal.last_index() < journal.first_index();
            if journal.first_index() > next {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the journal starts at entry {} but Raft purged only up to {}: entries \
                         are missing; wipe the partition's directory so that it rejoins from \
                         its peers",
                        journal.first_index(),
                        purged.index + 1
                    ),
                ));
            }
            // A snapshot covered everything held: continue after it (also after a crash
            // between a reset's removal of the old segments and its new one).
            let covered = journal.last_index() < next - 1;
            if covered && !(empty && journal.first_index() == next) {
                journal.reset(next).map_err(io::Error::other)?;
            }
        }
        let flush = flusher.register(journal.flusher())?;
        Ok(Self {
            journal,
            meta,
            shared: Arc::new(Shared {
                vote: Mutex::new(vote),
                purged: Mutex::new(purged),
                recent: Arc::new(RecentEntries::new(recent)),
                voids: Voids::default(),
            }),
            flush,
            floor,
        })
    }

    /// The journal (for the partition: its commit index and committed reader).
    pub fn journal(&self) -> &J {
        &self.journal
    }

    /// The latest entries kept in memory, for the partition's readers ([`ReplicaReaders`]).
    pub(crate) fn recent(&self) -> Arc<RecentEntries> {
        self.shared.recent.clone()
    }

    /// Where void batches were stored in the leader's current term.
    pub fn voids(&self) -> Voids {
        self.shared.voids.clone()
    }

    async fn barrier(&self) -> io::Result<()> {
        self.flush.barrier().await
    }

    fn last_log_id(&self) -> io::Result<Option<LogId>> {
        if self.journal.last_index() < self.journal.first_index() {
            return Ok(None);
        }
        Ok(Some(log_id(
            self.journal.last_term(),
            self.journal.last_index() - 1,
        )))
    }
}

impl<J: Journal + Sync> RaftLogStorage<TypeConfig> for JournalLogStore<J>
where
    J::Reader: Sync,
{
    type LogReader = JournalLogReader<J::Reader>;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
        let purged = self.shared.purged();
        let last = match (self.last_log_id()?, purged) {
            (Some(last), Some(purged)) if last.index < purged.index => Some(purged),
            (None, purged) => purged,
            (last, _) => last,
        };
        Ok(LogState {
            last_purged_log_id: purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        JournalLogReader {
            reader: self.journal.log_reader(),
            shared: self.shared.clone(),
        }
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), io::Error> {
        self.barrier().await?;
        self.meta.save_vote(vote)?;
        *self.shared.vote.lock().unwrap_or_else(|e| e.into_inner()) = Some(*vote);
        Ok(())
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), io::Error> {
        self.meta.save_committed(committed.as_ref())
    }

    /// The commit recorded, but never past the log's end. A follower records the commit
    /// index its leader sends as soon as it has accepted the entries, before they are
    /// flushed; killed then, it comes back with a log that ends before its recorded commit
    /// (and openraft, re-applying up to it, would fail to open the group). Its log is a
    /// prefix of the committed one, so it is committed up to its end; the rest is on a
    /// quorum and comes back from the leader.
    async fn read_committed(&mut self) -> Result<Option<LogId>, io::Error> {
        let committed = self.meta.read_committed()?;
        let held = self.get_log_state().await?.last_log_id;
        Ok(match (committed, held) {
            (Some(committed), Some(held)) if committed.index > held.index => Some(held),
            (Some(_), None) => None,
            (committed, _) => committed,
        })
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: IOFlushed<TypeConfig>,
    ) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        for entry in entries {
            let index = entry.index() + 1;
            let next = self.journal.last_index() + 1;
            if index != next {
                let empty = self.journal.last_index() < self.journal.first_index();
                if !(empty && index > next) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "Raft entry {} does not follow the log's last entry {}",
                            entry.index(),
                            next.saturating_sub(2)
                        ),
                    ));
                }
                self.shared.recent.clear();
                self.journal.reset(index).map_err(io::Error::other)?;
            }
            let (term, kind, asqn, data) = journal_parts(&entry)?;
            self.journal
                .append_entry(term, kind, asqn, &data)
                .map_err(io::Error::other)?;
            // What the journal holds is what is kept: a void batch as a blank entry.
            let entry = if is_void(&entry) {
                self.shared.voids.mark(index);
                tracing::warn!(
                    index,
                    "a batch landed where another was refused; stored void"
                );
                Entry::new_blank(entry.log_id())
            } else {
                entry
            };
            // The journal's asqn: an entry without records repeats the one before it.
            let asqn = self.journal.last_asqn().unwrap_or(0);
            self.shared.recent.push(entry, asqn);
        }
        self.flush.append(callback)
    }

    async fn truncate_after(&mut self, last_log_id: Option<LogId>) -> Result<(), io::Error> {
        self.barrier().await?;
        let keep = last_log_id.map_or(0, |id| id.index + 1);
        if keep >= self.journal.last_index() {
            return Ok(());
        }
        // Before the journal: a reader never finds kept what the journal no longer holds.
        self.shared
            .recent
            .truncate_after(last_log_id.map(|id| id.index));
        let first = self.journal.first_index();
        if keep + 1 < first {
            // Everything held goes (the journal keeps its starting index).
            self.journal.reset(first).map_err(io::Error::other)
        } else {
            self.journal.truncate_after(keep).map_err(io::Error::other)
        }
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), io::Error> {
        self.barrier().await?;
        if self
            .shared
            .purged()
            .is_some_and(|p| p.index >= log_id.index)
        {
            return Ok(());
        }
        self.meta.save_purged(&log_id)?;
        *self.shared.purged.lock().unwrap_or_else(|e| e.into_inner()) = Some(log_id);
        self.shared.recent.purge(log_id.index);
        let next = log_id.index + 2;
        if self.journal.last_index() < next - 1 {
            // The purge passes the log's end (a snapshot from the leader): continue after it.
            self.shared.recent.clear();
            return self.journal.reset(next).map_err(io::Error::other);
        }
        let compaction = self
            .journal
            .compact(next.min(self.floor.get()))
            .map_err(io::Error::other)?;
        if !compaction.is_empty() {
            tokio::task::spawn_blocking(move || {
                if let Err(error) = compaction.finish() {
                    tracing::warn!(%error, "cannot delete purged journal segments");
                }
            });
        }
        Ok(())
    }
}

/// Reads a partition's Raft log for replication: every appended entry above the purge mark.
pub struct JournalLogReader<R: JournalReader> {
    reader: R,
    shared: Arc<Shared>,
}

impl<R: JournalReader + Sync> RaftLogReader<TypeConfig> for JournalLogReader<R> {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, io::Error> {
        let mut start = match range.start_bound() {
            Bound::Included(&i) => i,
            Bound::Excluded(&i) => i + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&i) => i.saturating_add(1),
            Bound::Excluded(&i) => i,
            Bound::Unbounded => u64::MAX,
        };
        if let Some(purged) = self.shared.purged() {
            start = start.max(purged.index + 1);
        }
        let mut entries = Vec::new();
        if start >= end {
            return Ok(entries);
        }
        if let Some(kept) = self.shared.recent.range(start, end) {
            return Ok(kept);
        }
        self.reader.seek(start + 1).map_err(io::Error::other)?;
        while let Some(entry) = self.reader.next_entry() {
            let entry = from_journal(entry.map_err(io::Error::other)?)?;
            if entry.index() >= end {
                break;
            }
            if entry.index() >= start {
                entries.push(entry);
            }
        }
        Ok(entries)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        Ok(self.shared.vote())
    }
}
