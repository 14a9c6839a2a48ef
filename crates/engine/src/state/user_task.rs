//! Camunda user tasks, by key, with their lifecycle state.

use beeline_protocol::value::UserTaskRecord;
use beeline_state::{ColumnFamily, KeyBuilder, Result, Transaction};

use super::decode;
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
            .map(|bytes| decode(ColumnFamily::UserTasks, &bytes))
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

    /// Stores the task as `record`, in `lifecycle`.
    pub fn put(&mut self, key: i64, record: &UserTaskRecord, lifecycle: UserTaskLifecycle) {
        let mut stored_record = record.clone();
        // The variables belong to the transition, not to the task.
        stored_record.variables.clear();
        let stored = StoredUserTask {
            record: Some(stored_record),
            state: lifecycle as u32,
        };
        self.txn.put(
            user_task(key),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
    }

    pub fn remove(&mut self, key: i64) {
        self.txn.delete(user_task(key));
    }
}
