//! The entries a group appended last, kept in memory so that replication, openraft's apply
//! and the partition's replay take them without reading them back from the journal.
//!
//! A leader's replication streams read the entries it has just appended (a follower is
//! usually one batch behind), openraft's apply reads every committed entry on every replica,
//! and a follower's replay reads each committed entry once more: each read back meant a
//! `pread` and a frame decode with its checksum, per entry and per reader. The store keeps the
//! latest appends here, up to a byte bound counted in the broker's memory budget; its log
//! reader serves a range from here when the range starts at or after the oldest entry kept,
//! and the partition's readers ([`super::ReplicaReader`]) each entry kept; anything older
//! comes from the journal as before.
//!
//! What is kept is always the journal's tail: contiguous, ending at the journal's last entry.
//! The store truncates and resets it with the journal (before the journal, so that a reader
//! never finds here what the journal no longer holds), and drops it whole when an entry is
//! larger than the bound.

use std::collections::VecDeque;
use std::sync::Mutex;

use openraft::EntryPayload;
use openraft::entry::RaftEntry;

use crate::types::{Entry, to_journal};

/// What an entry costs beside its batch (the entry, its log id, the deque's slot).
const ENTRY_OVERHEAD: usize = 96;

/// The latest entries appended to a group's journal (see the module documentation).
#[derive(Debug)]
pub(crate) struct RecentEntries {
    limit: usize,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// Each entry with its asqn in the journal (an entry without records repeats the one
    /// before it).
    entries: VecDeque<(Entry, u64)>,
    bytes: usize,
}

impl Kept {
    /// Raft index of the first entry kept, when any is.
    fn first(&self) -> Option<u64> {
        self.entries.front().map(|(e, _)| e.index())
    }

    /// The entry of Raft index `index` with its journal asqn, when kept.
    fn get(&self, index: u64) -> Option<&(Entry, u64)> {
        let at = index.checked_sub(self.first()?)?;
        self.entries.get(usize::try_from(at).ok()?)
    }

    fn pop_front(&mut self) {
        if let Some((entry, _)) = self.entries.pop_front() {
            self.bytes -= size(&entry);
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }
}

fn size(entry: &Entry) -> usize {
    ENTRY_OVERHEAD
        + match &entry.payload {
            EntryPayload::Normal(batch) => batch.data.len(),
            EntryPayload::Blank => 0,
            EntryPayload::Membership(_) => 256,
        }
}

impl RecentEntries {
    /// Keeps up to `limit` bytes of entries; 0 keeps none.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            kept: Mutex::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `entry` was appended to the journal, with `asqn` (the journal's asqn of it).
    pub(crate) fn push(&self, entry: Entry, asqn: u64) {
        if self.limit == 0 {
            return;
        }
        let cost = size(&entry);
        let mut kept = self.kept();
        let follows = kept
            .entries
            .back()
            .is_none_or(|(last, _)| last.index() + 1 == entry.index());
        if !follows || cost > self.limit {
            // Not the journal's tail any more: what is kept would not be contiguous.
            kept.clear();
            if cost > self.limit {
                return;
            }
        }
        while kept.bytes + cost > self.limit {
            kept.pop_front();
        }
        kept.bytes += cost;
        kept.entries.push_back((entry, asqn));
    }

    /// The journal keeps the entries up to Raft index `last` only (none: nothing).
    pub(crate) fn truncate_after(&self, last: Option<u64>) {
        let mut kept = self.kept();
        while kept
            .entries
            .back()
            .is_some_and(|(e, _)| last.is_none_or(|last| e.index() > last))
        {
            if let Some((entry, _)) = kept.entries.pop_back() {
                kept.bytes -= size(&entry);
            }
        }
    }

    /// Entries up to Raft index `last` are purged: no longer served.
    pub(crate) fn purge(&self, last: u64) {
        let mut kept = self.kept();
        while kept.first().is_some_and(|first| first <= last) {
            kept.pop_front();
        }
    }

    /// The journal starts anew (a snapshot covered everything it held).
    pub(crate) fn clear(&self) {
        self.kept().clear();
    }

    /// The entries with Raft indexes in `start..end` (`start < end`), when every one of them
    /// is kept. `None`: read the journal.
    pub(crate) fn range(&self, start: u64, end: u64) -> Option<Vec<Entry>> {
        let kept = self.kept();
        let first = kept.first()?;
        let next = first + kept.entries.len() as u64;
        if start < first || end > next || start >= end {
            return None;
        }
        let (from, to) = ((start - first) as usize, (end - first) as usize);
        Some(
            kept.entries
                .range(from..to)
                .map(|(entry, _)| entry.clone())
                .collect(),
        )
    }

    /// Journal entry `index` as the journal holds it, when it is kept. `None`: read the
    /// journal.
    pub(crate) fn journal_entry(&self, index: u64) -> Option<beeline_log::Entry> {
        let kept = self.kept();
        let (entry, asqn) = kept.get(index.checked_sub(1)?)?;
        // Only a membership entry fails (its JSON): the journal then reads it.
        let (term, kind, _, data) = to_journal(entry).ok()?;
        Some(beeline_log::Entry {
            index,
            term,
            kind,
            asqn: *asqn,
            data,
        })
    }

    /// Bytes kept (tests).
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.kept().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Batch, log_id};

    fn entry(index: u64, bytes: usize) -> Entry {
        Entry::new(
            log_id(1, index),
            EntryPayload::Normal(Batch::new(index, vec![index as u8; bytes])),
        )
    }

    fn indexes(entries: Option<Vec<Entry>>) -> Option<Vec<u64>> {
        entries.map(|e| e.iter().map(|e| e.index()).collect())
    }

    #[test]
    fn serves_the_tail_it_keeps_and_sends_older_reads_to_the_journal() {
        let recent = RecentEntries::new(10 * (100 + ENTRY_OVERHEAD));
        for index in 1..=20 {
            recent.push(entry(index, 100), index);
        }
        // The oldest went when the bound was reached: 11..=20 are kept.
        assert_eq!(recent.bytes(), 10 * (100 + ENTRY_OVERHEAD));
        assert_eq!(indexes(recent.range(11, 14)), Some(vec![11, 12, 13]));
        assert_eq!(indexes(recent.range(18, 21)), Some(vec![18, 19, 20]));
        assert_eq!(
            indexes(recent.range(10, 14)),
            None,
            "partly older: the journal"
        );
        assert_eq!(
            indexes(recent.range(18, 22)),
            None,
            "partly newer: the journal"
        );
        assert_eq!(indexes(recent.range(18, u64::MAX)), None);
        let served = recent.range(15, 16).unwrap();
        assert_eq!(served[0], entry(15, 100));
    }

    #[test]
    fn truncation_purge_and_a_gap_keep_it_the_journals_tail() {
        let recent = RecentEntries::new(1 << 20);
        for index in 1..=10 {
            recent.push(entry(index, 10), index);
        }
        recent.truncate_after(Some(6));
        assert_eq!(indexes(recent.range(5, 7)), Some(vec![5, 6]));
        assert_eq!(indexes(recent.range(5, 8)), None);
        recent.push(entry(7, 10), 7);
        assert_eq!(indexes(recent.range(6, 8)), Some(vec![6, 7]));
        recent.purge(3);
        assert_eq!(indexes(recent.range(3, 5)), None);
        assert_eq!(indexes(recent.range(4, 5)), Some(vec![4]));
        // An entry that does not follow the last one (the journal was reset): only it is kept.
        recent.push(entry(50, 10), 50);
        assert_eq!(indexes(recent.range(7, 8)), None);
        assert_eq!(indexes(recent.range(50, 51)), Some(vec![50]));
        recent.truncate_after(None);
        assert_eq!(recent.bytes(), 0);
        assert_eq!(indexes(recent.range(50, 51)), None);
        recent.push(entry(60, 10), 60);
        recent.clear();
        assert_eq!(indexes(recent.range(60, 61)), None);
    }

    #[test]
    fn an_entry_larger_than_the_bound_empties_it_and_none_keeps_nothing() {
        let recent = RecentEntries::new(1000);
        recent.push(entry(1, 10), 1);
        recent.push(entry(2, 5000), 2);
        assert_eq!(recent.bytes(), 0);
        assert_eq!(indexes(recent.range(1, 3)), None);
        recent.push(entry(3, 10), 3);
        assert_eq!(indexes(recent.range(3, 4)), Some(vec![3]));
        let none = RecentEntries::new(0);
        none.push(entry(1, 10), 1);
        assert_eq!(indexes(none.range(1, 2)), None);
    }
}
