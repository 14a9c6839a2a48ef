//! The partition's readers of a replica's journal: each entry the group still keeps in memory
//! ([`RecentEntries`]) comes from there, the others from the journal.
//!
//! A follower replays every committed entry into its state right after its commit, and the
//! exporters read it again: from the journal, each was a `pread` and a frame decode with its
//! checksum (8% of a follower's CPU under load). The entries just committed are nearly always
//! among those the group keeps, so the partition's readers take them from there. The stream
//! layer sees only a [`JournalReader`]: it knows nothing of Raft nor of what is kept.
//!
//! What is kept is always a part of the journal's tail, truncated and reset with it (before
//! it), so an entry served from memory is the one the journal holds at that index. A
//! committed reader serves none past the commit index, as the journal's reader does.

use std::sync::Arc;

use beeline_log::{CommitIndex, Entry, FileReader, FileReaders, JournalReader};

use super::recent::RecentEntries;

/// Makes a replica's readers (see the module documentation).
#[derive(Debug, Clone)]
pub struct ReplicaReaders {
    files: FileReaders,
    recent: Arc<RecentEntries>,
}

impl ReplicaReaders {
    /// Readers of the journal `files` reads, taking what `recent` keeps of it from there.
    pub(crate) fn new(files: FileReaders, recent: Arc<RecentEntries>) -> Self {
        Self { files, recent }
    }

    /// A reader of committed entries, as [`beeline_log::Journal::reader`].
    pub fn reader(&self) -> ReplicaReader {
        ReplicaReader::new(
            self.files.reader(),
            self.recent.clone(),
            Some(self.files.commit_index()),
        )
    }

    /// A reader of every appended entry, as [`beeline_log::Journal::log_reader`].
    pub fn log_reader(&self) -> ReplicaReader {
        ReplicaReader::new(self.files.log_reader(), self.recent.clone(), None)
    }

    /// The journal's commit index.
    pub fn commit_index(&self) -> Arc<CommitIndex> {
        self.files.commit_index()
    }

    /// The newest entry appended (0 when none), committed or not.
    pub fn last_appended(&self) -> u64 {
        self.files.last_appended()
    }
}

/// A cursor over a replica's journal (see the module documentation).
#[derive(Debug)]
pub struct ReplicaReader {
    file: FileReader,
    recent: Arc<RecentEntries>,
    /// Up to where it reads: the commit index, or (none) every entry appended.
    commit: Option<Arc<CommitIndex>>,
    /// The journal index of the entry read next, once known: after a seek by index or an
    /// entry read. After a seek by asqn the journal's reader finds it.
    next: Option<u64>,
    /// Whether `file` stands at `next`: not once entries came from memory.
    file_in_step: bool,
}

impl ReplicaReader {
    fn new(file: FileReader, recent: Arc<RecentEntries>, commit: Option<Arc<CommitIndex>>) -> Self {
        Self {
            file,
            recent,
            commit,
            next: Some(1),
            file_in_step: true,
        }
    }

    /// Entry `next` from memory, when it is kept and may be read.
    fn kept(&self, next: u64) -> Option<Entry> {
        if self
            .commit
            .as_ref()
            .is_some_and(|commit| next > commit.get())
        {
            return None;
        }
        self.recent.journal_entry(next)
    }
}

impl JournalReader for ReplicaReader {
    fn seek(&mut self, index: u64) -> beeline_log::Result<()> {
        self.file.seek(index)?;
        self.next = Some(index.max(1));
        self.file_in_step = true;
        Ok(())
    }

    fn seek_to_asqn(&mut self, asqn: u64) -> beeline_log::Result<()> {
        self.file.seek_to_asqn(asqn)?;
        self.next = None;
        self.file_in_step = true;
        Ok(())
    }

    fn next_entry(&mut self) -> Option<beeline_log::Result<Entry>> {
        if let Some(next) = self.next {
            if let Some(entry) = self.kept(next) {
                self.next = Some(next + 1);
                self.file_in_step = false;
                return Some(Ok(entry));
            }
            if !self.file_in_step {
                if let Err(e) = self.file.seek(next) {
                    return Some(Err(e));
                }
                self.file_in_step = true;
            }
        }
        let entry = self.file.next_entry();
        if let Some(Ok(entry)) = &entry {
            self.next = Some(entry.index + 1);
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use beeline_log::{EntryKind, FileJournal, FileJournalConfig, Journal};
    use openraft::EntryPayload;
    use openraft::entry::RaftEntry;

    use super::*;
    use crate::types::{Batch, Entry as RaftLogEntry, log_id};

    fn read_all(reader: &mut impl JournalReader) -> Vec<Entry> {
        std::iter::from_fn(|| reader.next_entry())
            .map(|entry| entry.expect("read"))
            .collect()
    }

    /// A journal with a blank entry and `normal` batches, the newest of which `recent` keeps
    /// (as the store keeps them), its readers, and the plain file readers to compare with.
    fn journal(normal: u64, kept: usize) -> (tempfile::TempDir, FileJournal, ReplicaReaders) {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = FileJournalConfig {
            segment_size: 64 * 1024,
            max_entry_size: 32 * 1024,
            commit_recovered: false,
            ..Default::default()
        };
        let mut journal = FileJournal::open(dir.path(), config).expect("open");
        let recent = Arc::new(RecentEntries::new(kept));
        // `None`: a blank entry.
        let append = |journal: &mut FileJournal, batch: Option<Batch>| {
            let index = journal.last_index();
            let (kind, asqn, data) = match &batch {
                Some(batch) => (EntryKind::Normal, batch.asqn, batch.data.to_vec()),
                None => (EntryKind::Blank, 0, Vec::new()),
            };
            journal.append_entry(1, kind, asqn, &data).expect("append");
            let payload = batch.map_or(EntryPayload::Blank, EntryPayload::Normal);
            let asqn = journal.last_asqn().unwrap_or(0);
            recent.push(RaftLogEntry::new(log_id(1, index), payload), asqn);
        };
        append(&mut journal, None);
        for i in 1..=normal {
            let data: Vec<u8> = (0..300).map(|b| (i + b) as u8).collect();
            append(&mut journal, Some(Batch::new(i * 10, data)));
            if i % 7 == 0 {
                append(&mut journal, None);
            }
        }
        let readers = ReplicaReaders::new(journal.readers(), recent);
        (dir, journal, readers)
    }

    #[test]
    fn reads_what_the_journal_reads_from_memory_and_from_the_journal() {
        // About the last 40 entries kept of 115.
        let (_dir, journal, readers) = journal(100, 40 * (300 + 96));
        let files = journal.readers();
        let last = journal.last_index();
        journal.commit_index().advance(last - 5);
        let compare = |position: &dyn Fn(&mut dyn JournalReader)| {
            let mut replica = readers.reader();
            let mut file = files.reader();
            position(&mut replica);
            position(&mut file);
            let (got, expected) = (read_all(&mut replica), read_all(&mut file));
            assert_eq!(got, expected);
            // And on once more is committed, as a follower's replay goes on.
            (replica, file)
        };
        for asqn in [0, 5, 10, 300, 735, 990, 5000] {
            compare(&|r| r.seek_to_asqn(asqn).expect("seek"));
        }
        for index in [0, 1, 2, 50, 80, 100, last - 5, last] {
            compare(&|r| r.seek(index).expect("seek"));
        }
        let (mut replica, mut file) = compare(&|r| r.seek(90).expect("seek"));
        journal.commit_index().advance(last);
        let (got, expected) = (read_all(&mut replica), read_all(&mut file));
        assert_eq!(got.len(), 5, "the entries committed since");
        assert_eq!(got, expected);
        let mut log = readers.log_reader();
        assert_eq!(read_all(&mut log), read_all(&mut files.log_reader()));
    }
}
