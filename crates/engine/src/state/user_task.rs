//! Camunda user tasks, by key, with their lifecycle state.

use beeline_protocol::value::UserTaskRecord;
use beeline_state::{ColumnFamily, KeyBuilder, Result, Transaction};

use super::decode_stored;
use super::values::{StoredUserTask, UserTaskLifecycle};

fn user_task(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::UserTasks).i64(key).build()
}

pub struct UserTaskState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> UserTaskState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(&self, key: i64) -> Result<Option<StoredUserTask>> {
        self.txn
            .get(&user_task(key))?
            .map(|bytes| decode_stored(ColumnFamily::UserTasks, key, &bytes))
            .transpose()
    }
}

pub struct MutableUserTaskState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableUserTaskState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    /// Stores the task as `record`, in `lifecycle`, with no transition under way.
    pub fn put(&mut self, key: i64, record: &UserTaskRecord, lifecycle: UserTaskLifecycle) {
        self.store(
            key,
            StoredUserTask {
                record: Some(record.clone()),
                state: lifecycle as u32,
                ..StoredUserTask::default()
            },
        );
    }

    /// Stores the task as given.
    pub fn store(&mut self, key: i64, mut stored: StoredUserTask) {
        if let Some(record) = stored.record.as_mut() {
            // The variables belong to the transition (its intermediate record), not to the
            // task.
            record.variables.clear();
        }
        self.txn.put(
            user_task(key),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
    }

    /// The task, to change and store again.
    pub fn get(&self, key: i64) -> Result<Option<StoredUserTask>> {
        self.txn
            .get(&user_task(key))?
            .map(|bytes| decode_stored(ColumnFamily::UserTasks, key, &bytes))
            .transpose()
    }

    pub fn remove(&mut self, key: i64) {
        self.txn.delete(user_task(key));
    }
}
