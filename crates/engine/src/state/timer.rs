//! Timers, by key, by due date (for the scheduler) and by what they belong to (to cancel
//! them when their element instance ends, or when a new process version replaces a timer
//! start event).

use beeline_protocol::value::TimerRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode;
use super::time_index::{due, first_time};

fn timer(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Timers).i64(key).build()
}

fn by_due_date(due_date: i64, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::TimerDueDates)
        .i64(due_date)
        .i64(key)
        .build()
}

fn by_scope(scope: i64, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::TimersByScope)
        .i64(scope)
        .i64(key)
        .build()
}

/// What a timer belongs to: its element instance, or for a timer start event its process
/// definition.
pub fn scope_of(timer: &TimerRecord) -> i64 {
    if timer.element_instance_key > 0 {
        timer.element_instance_key
    } else {
        timer.process_definition_key
    }
}

pub struct TimerState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> TimerState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(&self, key: i64) -> Result<Option<TimerRecord>> {
        self.txn
            .get(&timer(key))?
            .map(|bytes| decode(ColumnFamily::Timers, &bytes))
            .transpose()
    }

    /// Timers of an element instance (or of a process definition's start events), oldest
    /// first.
    pub fn of_scope(&self, scope: i64) -> Result<Vec<(i64, TimerRecord)>> {
        let prefix = KeyBuilder::new(ColumnFamily::TimersByScope)
            .i64(scope)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::TimersByScope, &key)?;
            reader.i64()?;
            let key = reader.i64()?;
            if let Some(timer) = self.get(key)? {
                found.push((key, timer));
            }
        }
        Ok(found)
    }

    /// Timers due at or before `now`, earliest first, at most `limit`: (due date, key).
    pub fn due(&self, now: i64, limit: usize) -> Result<Vec<(i64, i64)>> {
        due(self.txn, ColumnFamily::TimerDueDates, now, limit)
    }

    /// The earliest due date of any timer.
    pub fn next_due_date(&self) -> Result<Option<i64>> {
        first_time(self.txn, ColumnFamily::TimerDueDates)
    }
}

pub struct MutableTimerState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableTimerState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    /// Stores a new timer (its key is new, so are its index entries).
    pub fn insert(&mut self, key: i64, record: &TimerRecord) {
        self.txn.insert(
            timer(key),
            beeline_protocol::protobuf::encode_to_vec(record),
        );
        self.txn
            .insert(by_due_date(record.due_date, key), Vec::new());
        self.txn.insert(by_scope(scope_of(record), key), Vec::new());
    }

    /// Forgets a timer that triggered or was canceled.
    pub fn remove(&mut self, key: i64) -> Result<()> {
        if let Some(record) = TimerState::new(self.txn).get(key)? {
            self.txn.delete(timer(key));
            self.txn.delete(by_due_date(record.due_date, key));
            self.txn.delete(by_scope(scope_of(&record), key));
        }
        Ok(())
    }
}
