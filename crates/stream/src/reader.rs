//! Committed records, decoded from the journal's entries.

use std::collections::VecDeque;

use beeline_log::JournalReader;
use beeline_protocol::Record;
use beeline_protocol::codec::decode_batch;
use tokio::sync::watch;

/// Reads committed records in log order; can wait for more.
pub struct LogStreamReader {
    reader: Box<dyn JournalReader>,
    decoded: VecDeque<Record>,
    commits: watch::Receiver<u64>,
}

impl LogStreamReader {
    pub(crate) fn new(reader: Box<dyn JournalReader>, commits: watch::Receiver<u64>) -> Self {
        Self {
            reader,
            decoded: VecDeque::new(),
            commits,
        }
    }

    /// Positions the reader at the first record with a position `>= position`.
    pub fn seek(&mut self, position: i64) -> Result<(), String> {
        self.decoded.clear();
        self.reader
            .seek_to_asqn(position.max(0) as u64)
            .map_err(|e| e.to_string())?;
        while let Some(record) = self.next_record()? {
            if record.position >= position {
                self.decoded.push_front(record);
                break;
            }
        }
        Ok(())
    }

    /// The next committed record, or `None` when caught up.
    pub fn next_record(&mut self) -> Result<Option<Record>, String> {
        if let Some(record) = self.decoded.pop_front() {
            return Ok(Some(record));
        }
        loop {
            match self.reader.next_entry() {
                None => return Ok(None),
                Some(Err(e)) => return Err(e.to_string()),
                // Raft's own entries (a leader's blank entry, membership changes) hold no
                // records.
                Some(Ok(entry)) if !entry.kind.carries_records() => continue,
                Some(Ok(entry)) => {
                    let records = decode_batch(&entry.data, entry.asqn as i64)
                        .map_err(|e| format!("undecodable log entry {}: {e}", entry.index))?;
                    self.decoded.extend(records);
                    return Ok(self.decoded.pop_front());
                }
            }
        }
    }

    /// The next committed record, waiting for one when caught up. `None` once the partition
    /// is gone.
    pub async fn next_waiting(&mut self) -> Result<Option<Record>, String> {
        loop {
            self.commits.borrow_and_update();
            if let Some(record) = self.next_record()? {
                return Ok(Some(record));
            }
            if self.commits.changed().await.is_err() {
                return self.next_record();
            }
        }
    }
}
