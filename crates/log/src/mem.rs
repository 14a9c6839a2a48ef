//! The in-memory journal: the same contract as the file journal, for tests and harnesses.

use std::collections::VecDeque;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::journal::{CommitIndex, Compaction, Entry, Flusher, Journal, JournalReader};
use crate::{Error, Result};

#[derive(Debug, Default)]
struct Entries {
    /// Index of `entries[0]`.
    first_index: u64,
    entries: VecDeque<(u64, Arc<[u8]>)>,
}

impl Entries {
    fn last_index(&self) -> u64 {
        self.first_index + self.entries.len() as u64 - 1
    }

    fn get(&self, index: u64) -> Option<Entry> {
        let offset = index.checked_sub(self.first_index)?;
        let (asqn, data) = self.entries.get(usize::try_from(offset).ok()?)?;
        Some(Entry {
            index,
            asqn: *asqn,
            data: data.to_vec(),
        })
    }
}

#[derive(Debug, Clone)]
pub struct MemJournal {
    entries: Arc<RwLock<Entries>>,
    commit: Arc<CommitIndex>,
}

impl Default for MemJournal {
    fn default() -> Self {
        Self::new()
    }
}

impl MemJournal {
    pub fn new() -> Self {
        Self {
            entries: Arc::new(RwLock::new(Entries {
                first_index: 1,
                entries: VecDeque::new(),
            })),
            commit: CommitIndex::new(0),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Entries> {
        // A panic while holding the lock cannot leave `Entries` half-updated: every mutation is
        // a single push, pop or truncate, so a poisoned lock is still consistent.
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Entries> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Journal for MemJournal {
    type Reader = MemReader;
    type Flusher = MemFlusher;

    fn append(&mut self, asqn: u64, data: &[u8]) -> Result<u64> {
        let mut entries = self.write();
        if let Some((last, _)) = entries.entries.back()
            && asqn <= *last
        {
            return Err(Error::AsqnNotIncreasing { asqn, last: *last });
        }
        entries.entries.push_back((asqn, data.into()));
        Ok(entries.last_index())
    }

    fn first_index(&self) -> u64 {
        self.read().first_index
    }

    fn last_index(&self) -> u64 {
        self.read().last_index()
    }

    fn last_asqn(&self) -> Option<u64> {
        self.read().entries.back().map(|(asqn, _)| *asqn)
    }

    fn flusher(&self) -> MemFlusher {
        MemFlusher {
            entries: self.entries.clone(),
        }
    }

    fn commit_index(&self) -> Arc<CommitIndex> {
        self.commit.clone()
    }

    fn reader(&self) -> MemReader {
        MemReader {
            entries: self.entries.clone(),
            commit: self.commit.clone(),
            next: 1,
        }
    }

    fn truncate_after(&mut self, index: u64) -> Result<()> {
        let commit = self.commit.get();
        if index < commit {
            return Err(Error::TruncateCommitted { index, commit });
        }
        let mut entries = self.write();
        let keep = index.saturating_sub(entries.first_index - 1);
        let keep = usize::try_from(keep).unwrap_or(usize::MAX);
        entries.entries.truncate(keep);
        Ok(())
    }

    fn compact(&mut self, index: u64) -> Result<Compaction> {
        let mut entries = self.write();
        while entries.first_index < index && !entries.entries.is_empty() {
            entries.entries.pop_front();
            entries.first_index += 1;
        }
        Ok(Compaction::default())
    }
}

#[derive(Debug, Clone)]
pub struct MemFlusher {
    entries: Arc<RwLock<Entries>>,
}

impl Flusher for MemFlusher {
    fn flush(&self) -> Result<u64> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        Ok(entries.last_index())
    }
}

#[derive(Debug)]
pub struct MemReader {
    entries: Arc<RwLock<Entries>>,
    commit: Arc<CommitIndex>,
    next: u64,
}

impl JournalReader for MemReader {
    fn seek(&mut self, index: u64) -> Result<()> {
        self.next = index;
        Ok(())
    }

    fn seek_to_asqn(&mut self, asqn: u64) -> Result<()> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        let commit = self.commit.get();
        // Entries are ordered by asqn: the partition point is the first entry past `asqn`.
        let after = entries.entries.partition_point(|(a, _)| *a <= asqn) as u64;
        let target = (entries.first_index + after).saturating_sub(1);
        self.next = target.max(entries.first_index).min(commit + 1);
        Ok(())
    }

    fn next_entry(&mut self) -> Option<Result<Entry>> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        if self.next < entries.first_index {
            self.next = entries.first_index;
        }
        if self.next > self.commit.get() {
            return None;
        }
        let entry = entries.get(self.next)?;
        self.next += 1;
        Some(Ok(entry))
    }
}
