//! Element instances, their children by flow scope, and tokens waiting at joining gateways.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use beeline_protocol::value::ProcessInstanceRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode_stored;
use super::values::ElementInstance;

fn instance(key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ElementInstances)
        .i64(key)
        .build()
}

fn child(parent: i64, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ElementInstanceChildren)
        .i64(parent)
        .i64(key)
        .build()
}

fn taken(flow_scope: i64, gateway: &str, flow: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::TakenSequenceFlows)
        .i64(flow_scope)
        .str(gateway)
        .str(flow)
        .build()
}

fn read_count(bytes: Option<Vec<u8>>) -> Result<u32> {
    Ok(super::read_int(ColumnFamily::TakenSequenceFlows, bytes, u32::from_be_bytes)?.unwrap_or(0))
}

/// The batch's element instances, each decoded once and encoded once per batch.
///
/// A batch reads and changes the same few instances many times (a scope's counters change with
/// every child that comes and goes): the instances it touched stay decoded here, and
/// [`flush`](InstanceCache::flush) writes those it changed to the transaction when the batch
/// ends. The ElementInstances column family is read and written only through it.
#[derive(Default)]
pub(super) struct InstanceCache {
    entries: RefCell<HashMap<i64, Cached>>,
}

struct Cached {
    value: Option<Rc<ElementInstance>>,
    change: Change,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Unchanged,
    /// Created in this batch: the store does not hold it.
    Created,
    Changed,
    Removed,
}

impl InstanceCache {
    fn get(&self, txn: &Transaction<'_>, key: i64) -> Result<Option<Rc<ElementInstance>>> {
        if let Some(cached) = self.entries.borrow().get(&key) {
            return Ok(cached.value.clone());
        }
        let value: Option<Rc<ElementInstance>> = txn
            .get(&instance(key))?
            .map(|bytes| decode_stored(ColumnFamily::ElementInstances, key, &bytes).map(Rc::new))
            .transpose()?;
        self.entries.borrow_mut().insert(
            key,
            Cached {
                value: value.clone(),
                change: Change::Unchanged,
            },
        );
        Ok(value)
    }

    fn set(&self, key: i64, value: Option<Rc<ElementInstance>>, created: bool) {
        let mut entries = self.entries.borrow_mut();
        let before = entries.get(&key).map(|c| c.change);
        let change = match (before, created, value.is_some()) {
            // Gone before the store ever saw it: nothing to write.
            (Some(Change::Created), _, false) => Change::Unchanged,
            (Some(Change::Created), _, true) => Change::Created,
            (_, _, false) => Change::Removed,
            // A new key (never seen, or not in the store): the store does not hold it.
            (None, true, true) => Change::Created,
            (Some(_), _, true) | (None, false, true) => Change::Changed,
        };
        entries.insert(key, Cached { value, change });
    }

    /// Applies `change` to the instance at `key` where the cache holds it, if it exists. The
    /// cache's copy is changed in place unless a caller still holds what it read (which keeps
    /// the value it read).
    fn update(
        &self,
        txn: &Transaction<'_>,
        key: i64,
        change: impl FnOnce(&mut ElementInstance),
    ) -> Result<()> {
        if self.get(txn, key)?.is_none() {
            return Ok(());
        }
        let mut entries = self.entries.borrow_mut();
        let Some(cached) = entries.get_mut(&key) else {
            return Ok(());
        };
        if let Some(value) = cached.value.as_mut() {
            change(Rc::make_mut(value));
            if cached.change != Change::Created {
                cached.change = Change::Changed;
            }
        }
        Ok(())
    }

    /// Writes the changed instances to the transaction, and forgets them all.
    pub(super) fn flush(&mut self, txn: &mut Transaction<'_>) {
        for (key, cached) in self.entries.get_mut().drain() {
            match (cached.change, cached.value) {
                (Change::Created, Some(value)) => txn.insert(
                    instance(key),
                    beeline_protocol::protobuf::encode_to_vec(&*value),
                ),
                (Change::Changed, Some(value)) => txn.put(
                    instance(key),
                    beeline_protocol::protobuf::encode_to_vec(&*value),
                ),
                (Change::Removed, _) => txn.delete(instance(key)),
                _ => {}
            }
        }
    }
}

pub struct ElementInstanceState<'t> {
    txn: &'t Transaction<'t>,
    cache: &'t InstanceCache,
}

impl<'t> ElementInstanceState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>, cache: &'t InstanceCache) -> Self {
        Self { txn, cache }
    }

    /// The instance as the batch sees it (shared: reading it copies nothing).
    pub fn get(&self, key: i64) -> Result<Option<Rc<ElementInstance>>> {
        self.cache.get(self.txn, key)
    }

    /// Keys of the active children of a scope, oldest first.
    pub fn children(&self, parent: i64) -> Result<Vec<i64>> {
        let prefix = KeyBuilder::new(ColumnFamily::ElementInstanceChildren)
            .i64(parent)
            .build();
        let mut keys = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::ElementInstanceChildren, &key)?;
            reader.i64()?;
            keys.push(reader.i64()?);
        }
        Ok(keys)
    }

    /// Up to `limit` children of a scope that can still be terminated (not terminating
    /// already), oldest first, from the child with key `from` on.
    pub fn terminable_children(
        &self,
        parent: i64,
        from: i64,
        limit: usize,
    ) -> Result<Vec<Rc<ElementInstance>>> {
        let prefix = KeyBuilder::new(ColumnFamily::ElementInstanceChildren)
            .i64(parent)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan_from(&prefix, &child(parent, from)) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::ElementInstanceChildren, &key)?;
            reader.i64()?;
            if let Some(instance) = self.get(reader.i64()?)?
                && !instance.is(super::values::ElementLifecycle::Terminating)
            {
                found.push(instance);
                if found.len() == limit {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// Tokens waiting at `gateway` that arrived over `flow`.
    pub fn taken_flows(&self, flow_scope: i64, gateway: &str, flow: &str) -> Result<u32> {
        read_count(self.txn.get(&taken(flow_scope, gateway, flow))?)
    }
}

pub struct MutableElementInstanceState<'t, 's> {
    txn: &'t mut Transaction<'s>,
    cache: &'t InstanceCache,
}

impl<'t, 's> MutableElementInstanceState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>, cache: &'t InstanceCache) -> Self {
        Self { txn, cache }
    }

    fn get(&self, key: i64) -> Result<Option<Rc<ElementInstance>>> {
        self.cache.get(self.txn, key)
    }

    /// Creates an instance in `state`, as a child of its flow scope.
    pub fn create(&mut self, key: i64, record: &ProcessInstanceRecord, state: u32) -> Result<()> {
        let value = ElementInstance {
            key,
            record: Some(record.clone()),
            state,
            ..Default::default()
        };
        self.cache.set(key, Some(Rc::new(value)), true);
        if record.flow_scope_key > 0 {
            self.txn
                .insert(child(record.flow_scope_key, key), Vec::new());
            self.update(record.flow_scope_key, |scope| scope.active_children += 1)?;
        }
        Ok(())
    }

    /// Changes an instance, if it exists.
    pub fn update(&mut self, key: i64, change: impl FnOnce(&mut ElementInstance)) -> Result<()> {
        self.cache.update(self.txn, key, change)
    }

    /// Removes a completed or terminated instance from its scope.
    pub fn remove(&mut self, key: i64) -> Result<()> {
        let Some(value) = self.get(key)? else {
            return Ok(());
        };
        self.cache.set(key, None, false);
        let flow_scope = value.record().flow_scope_key;
        if flow_scope > 0 {
            self.txn.delete(child(flow_scope, key));
            self.update(flow_scope, |scope| scope.active_children -= 1)?;
        }
        Ok(())
    }

    pub fn add_taken_flow(&mut self, flow_scope: i64, gateway: &str, flow: &str) -> Result<()> {
        let key = taken(flow_scope, gateway, flow);
        let count = read_count(self.txn.get(&key)?)? + 1;
        self.txn.put(key, count.to_be_bytes().to_vec());
        Ok(())
    }

    /// Consumes one waiting token from `flow`, if there is one.
    pub fn consume_taken_flow(
        &mut self,
        flow_scope: i64,
        gateway: &str,
        flow: &str,
    ) -> Result<bool> {
        let key = taken(flow_scope, gateway, flow);
        let count = read_count(self.txn.get(&key)?)?;
        match count {
            0 => Ok(false),
            1 => {
                self.txn.delete(key);
                Ok(true)
            }
            n => {
                self.txn.put(key, (n - 1).to_be_bytes().to_vec());
                Ok(true)
            }
        }
    }

    /// The scope takes no new tokens (a terminate end event ended it, or an interrupting event
    /// is terminating what is in it): the tokens on their way in it are dropped.
    pub fn interrupt(&mut self, scope: i64) -> Result<()> {
        self.clear_taken_flows(scope)?;
        self.update(scope, |s| {
            s.interrupted = true;
            s.active_flows = 0;
        })
    }

    /// Forgets every token waiting in a scope that ends.
    pub fn clear_taken_flows(&mut self, flow_scope: i64) -> Result<()> {
        let prefix = KeyBuilder::new(ColumnFamily::TakenSequenceFlows)
            .i64(flow_scope)
            .build();
        let keys: Vec<Vec<u8>> = self
            .txn
            .scan(&prefix)
            .map(|entry| entry.map(|(k, _)| k))
            .collect::<Result<_>>()?;
        for key in keys {
            self.txn.delete(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::state::values::ElementLifecycle;
    use beeline_state::{MemStore, Store, WriteBatch};

    use super::*;

    fn record(flow_scope_key: i64) -> ProcessInstanceRecord {
        ProcessInstanceRecord {
            flow_scope_key,
            element_id: "task".into(),
            ..Default::default()
        }
    }

    /// The batch's writes after `change` ran over a store holding instance 1 (with child 2).
    fn writes(change: impl FnOnce(&mut MutableElementInstanceState<'_, '_>)) -> WriteBatch {
        let store = MemStore::new();
        let mut seed = Transaction::new(&store);
        let mut cache = InstanceCache::default();
        {
            let mut state = MutableElementInstanceState::new(&mut seed, &cache);
            state
                .create(1, &record(-1), ElementLifecycle::Activating as u32)
                .unwrap();
            state
                .create(2, &record(1), ElementLifecycle::Activating as u32)
                .unwrap();
        }
        cache.flush(&mut seed);
        seed.commit().unwrap();

        let mut txn = Transaction::new(&store);
        let cache = InstanceCache::default();
        change(&mut MutableElementInstanceState::new(&mut txn, &cache));
        let mut cache = cache;
        cache.flush(&mut txn);
        txn.take_batch()
    }

    fn instance_writes(batch: &WriteBatch) -> Vec<(i64, bool)> {
        batch
            .writes
            .iter()
            .filter(|(key, _)| key.starts_with(&instance(0)[..2]))
            .map(|(key, value)| {
                let mut reader = KeyReader::new(ColumnFamily::ElementInstances, key).unwrap();
                (reader.i64().unwrap(), value.is_some())
            })
            .collect()
    }

    #[test]
    fn a_batch_writes_each_changed_instance_once_with_its_last_value() {
        let batch = writes(|state| {
            state.update(1, |s| s.active_flows = 5).unwrap();
            state.update(1, |s| s.active_flows += 1).unwrap();
        });
        assert_eq!(instance_writes(&batch), vec![(1, true)]);
        let store = MemStore::new();
        store.write(batch).unwrap();
        let txn = Transaction::new(&store);
        let cache = InstanceCache::default();
        let scope = ElementInstanceState::new(&txn, &cache)
            .get(1)
            .unwrap()
            .unwrap();
        assert_eq!(scope.active_flows, 6);
    }

    #[test]
    fn an_instance_created_and_removed_in_one_batch_leaves_no_write() {
        let batch = writes(|state| {
            state
                .create(3, &record(1), ElementLifecycle::Activating as u32)
                .unwrap();
            state.update(3, |s| s.state = 2).unwrap();
            state.remove(3).unwrap();
        });
        assert_eq!(
            instance_writes(&batch),
            vec![(1, true)],
            "only the scope's counters change; no tombstone for 3"
        );
    }

    #[test]
    fn reads_in_a_batch_see_its_changes_and_removals() {
        let store = MemStore::new();
        let mut txn = Transaction::new(&store);
        let cache = InstanceCache::default();
        let mut state = MutableElementInstanceState::new(&mut txn, &cache);
        state
            .create(1, &record(-1), ElementLifecycle::Activating as u32)
            .unwrap();
        state
            .create(2, &record(1), ElementLifecycle::Activating as u32)
            .unwrap();
        assert_eq!(state.get(1).unwrap().unwrap().active_children, 1);
        state.remove(2).unwrap();
        assert!(state.get(2).unwrap().is_none());
        assert_eq!(state.get(1).unwrap().unwrap().active_children, 0);
        let batch = writes(|state| state.remove(2).unwrap());
        assert_eq!(
            instance_writes(&batch),
            vec![(1, true), (2, false)],
            "a stored instance removed leaves a delete"
        );
    }

    #[test]
    fn an_instance_read_before_a_change_keeps_what_was_read() {
        let batch = writes(|state| {
            let before = state.get(1).unwrap().unwrap();
            state.update(1, |s| s.active_flows = 7).unwrap();
            assert_eq!(
                before.active_flows, 0,
                "the value read is not changed under its reader"
            );
            assert_eq!(state.get(1).unwrap().unwrap().active_flows, 7);
        });
        assert_eq!(instance_writes(&batch), vec![(1, true)]);
    }
}
