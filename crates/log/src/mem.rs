//! The in-memory journal: the same contract as the file journal, for tests and harnesses.

use std::collections::VecDeque;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::journal::{CommitIndex, Compaction, Entry, EntryKind, Flusher, Journal, JournalReader};
use crate::{Error, Result};

#[derive(Debug, Default)]
struct Entries {
    /// Index of `entries[0]`.
    first_index: u64,
    entries: VecDeque<Stored>,
}

#[derive(Debug)]
struct Stored {
    term: u64,
    kind: EntryKind,
    asqn: u64,
    data: Arc<[u8]>,
}

impl Entries {
    fn last_index(&self) -> u64 {
        self.first_index + self.entries.len() as u64 - 1
    }

    fn get(&self, index: u64) -> Option<Entry> {
        let offset = index.checked_sub(self.first_index)?;
        let stored = self.entries.get(usize::try_from(offset).ok()?)?;
        Some(Entry {
            index,
            term: stored.term,
            kind: stored.kind,
            asqn: stored.asqn,
            data: stored.data.to_vec(),
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

    fn append_entry(&mut self, term: u64, kind: EntryKind, asqn: u64, data: &[u8]) -> Result<u64> {
        if kind.carries_records() && data.is_empty() {
            return Err(Error::EmptyEntry);
        }
        let mut entries = self.write();
        let last = entries.entries.back();
        if let Some(last) = last
            && term < last.term
        {
            return Err(Error::TermDecreasing {
                term,
                last: last.term,
            });
        }
        let last_asqn = last.map(|e| e.asqn);
        let asqn = match kind {
            EntryKind::Normal => {
                if let Some(last) = last_asqn
                    && asqn <= last
                {
                    return Err(Error::AsqnNotIncreasing { asqn, last });
                }
                asqn
            }
            EntryKind::Blank | EntryKind::Membership => last_asqn.unwrap_or(0),
        };
        entries.entries.push_back(Stored {
            term,
            kind,
            asqn,
            data: data.into(),
        });
        Ok(entries.last_index())
    }

    fn first_index(&self) -> u64 {
        self.read().first_index
    }

    fn last_index(&self) -> u64 {
        self.read().last_index()
    }

    fn last_asqn(&self) -> Option<u64> {
        self.read().entries.back().map(|e| e.asqn)
    }

    fn last_term(&self) -> u64 {
        self.read().entries.back().map_or(0, |e| e.term)
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
            commit: Some(self.commit.clone()),
            next: 1,
        }
    }

    fn log_reader(&self) -> MemReader {
        MemReader {
            entries: self.entries.clone(),
            commit: None,
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

    fn reset(&mut self, next_index: u64) -> Result<()> {
        let commit = self.commit.get();
        if next_index <= commit {
            return Err(Error::ResetCommitted {
                next: next_index,
                commit,
            });
        }
        let mut entries = self.write();
        entries.entries.clear();
        entries.first_index = next_index.max(1);
        self.commit.advance(next_index.saturating_sub(1));
        Ok(())
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
    /// `None`: a reader of every appended entry.
    commit: Option<Arc<CommitIndex>>,
    next: u64,
}

impl MemReader {
    fn limit(&self, entries: &Entries) -> u64 {
        match &self.commit {
            Some(commit) => commit.get(),
            None => entries.last_index(),
        }
    }
}

impl JournalReader for MemReader {
    fn seek(&mut self, index: u64) -> Result<()> {
        self.next = index;
        Ok(())
    }

    fn seek_to_asqn(&mut self, asqn: u64) -> Result<()> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        let limit = self.limit(&entries);
        // Entries are ordered by asqn: the partition point is the first entry past `asqn`.
        let mut after = entries.entries.partition_point(|e| e.asqn <= asqn);
        // Entries without records repeat the asqn before them: go back to the first of a run.
        while after >= 2 && entries.entries[after - 2].asqn == entries.entries[after - 1].asqn {
            after -= 1;
        }
        let target = (entries.first_index + after as u64).saturating_sub(1);
        self.next = target.max(entries.first_index).min(limit + 1);
        Ok(())
    }

    fn next_entry(&mut self) -> Option<Result<Entry>> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        if self.next < entries.first_index {
            self.next = entries.first_index;
        }
        if self.next > self.limit(&entries) {
            return None;
        }
        let entry = entries.get(self.next)?;
        self.next += 1;
        Some(Ok(entry))
    }
}
