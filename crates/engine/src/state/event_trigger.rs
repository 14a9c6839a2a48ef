//! Events waiting for the element instance that will catch them (Zeebe's event scope
//! triggers): keyed by the catching instance's key, found also by the instance whose event it
//! is (to activate a boundary event once its activity is terminated, an interrupting event
//! sub-process once its scope is empty).

use beeline_protocol::value::ProcessEventRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode;

fn trigger(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::EventTriggers)
        .i64(key)
        .build()
}

fn by_scope(scope: i64, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::EventTriggersByScope)
        .i64(scope)
        .i64(key)
        .build()
}

pub struct EventTriggerState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> EventTriggerState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    /// The event waiting for the catching instance `key`.
    pub fn get(&self, key: i64) -> Result<Option<ProcessEventRecord>> {
        self.txn
            .get(&trigger(key))?
            .map(|bytes| decode(ColumnFamily::EventTriggers, &bytes))
            .transpose()
    }

    /// Events of `scope`, oldest first: (catching instance key, event).
    pub fn of_scope(&self, scope: i64) -> Result<Vec<(i64, ProcessEventRecord)>> {
        let prefix = KeyBuilder::new(ColumnFamily::EventTriggersByScope)
            .i64(scope)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::EventTriggersByScope, &key)?;
            reader.i64()?;
            let catching = reader.i64()?;
            if let Some(event) = self.get(catching)? {
                found.push((catching, event));
            }
        }
        Ok(found)
    }
}

pub struct MutableEventTriggerState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableEventTriggerState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    pub fn put(&mut self, key: i64, event: &ProcessEventRecord) {
        self.txn.insert(
            trigger(key),
            beeline_protocol::protobuf::encode_to_vec(event),
        );
        self.txn.insert(by_scope(event.scope_key, key), Vec::new());
    }

    pub fn remove(&mut self, key: i64) -> Result<Option<ProcessEventRecord>> {
        let Some(event) = EventTriggerState::new(self.txn).get(key)? else {
            return Ok(None);
        };
        self.txn.delete(trigger(key));
        self.txn.delete(by_scope(event.scope_key, key));
        Ok(Some(event))
    }

    /// Forgets every event of a scope that ended before they were caught.
    pub fn remove_scope(&mut self, scope: i64) -> Result<()> {
        let pending = EventTriggerState::new(self.txn).of_scope(scope)?;
        for (key, _) in pending {
            self.remove(key)?;
        }
        Ok(())
    }
}
