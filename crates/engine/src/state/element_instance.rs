//! Element instances, their children by flow scope, and tokens waiting at joining gateways.

use beeline_protocol::value::ProcessInstanceRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode;
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

fn read_count(bytes: Option<Vec<u8>>) -> u32 {
    bytes
        .and_then(|b| Some(u32::from_be_bytes(b.as_slice().try_into().ok()?)))
        .unwrap_or(0)
}

pub struct ElementInstanceState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> ElementInstanceState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(&self, key: i64) -> Result<Option<ElementInstance>> {
        self.txn
            .get(&instance(key))?
            .map(|bytes| decode(ColumnFamily::ElementInstances, &bytes))
            .transpose()
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

    /// Tokens waiting at `gateway` that arrived over `flow`.
    pub fn taken_flows(&self, flow_scope: i64, gateway: &str, flow: &str) -> Result<u32> {
        Ok(read_count(self.txn.get(&taken(flow_scope, gateway, flow))?))
    }
}

pub struct MutableElementInstanceState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableElementInstanceState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    fn get(&self, key: i64) -> Result<Option<ElementInstance>> {
        ElementInstanceState::new(self.txn).get(key)
    }

    fn put(&mut self, value: &ElementInstance) {
        self.txn
            .put(instance(value.key), prost::Message::encode_to_vec(value));
    }

    /// Creates an instance in `state`, as a child of its flow scope.
    pub fn create(&mut self, key: i64, record: &ProcessInstanceRecord, state: u32) -> Result<()> {
        let value = ElementInstance {
            key,
            record: Some(record.clone()),
            state,
            ..Default::default()
        };
        self.txn
            .insert(instance(key), prost::Message::encode_to_vec(&value));
        if record.flow_scope_key > 0 {
            self.txn
                .insert(child(record.flow_scope_key, key), Vec::new());
            self.update(record.flow_scope_key, |scope| scope.active_children += 1)?;
        }
        Ok(())
    }

    /// Changes an instance, if it exists.
    pub fn update(&mut self, key: i64, change: impl FnOnce(&mut ElementInstance)) -> Result<()> {
        if let Some(mut value) = self.get(key)? {
            change(&mut value);
            self.put(&value);
        }
        Ok(())
    }

    /// Removes a completed or terminated instance from its scope.
    pub fn remove(&mut self, key: i64) -> Result<()> {
        let Some(value) = self.get(key)? else {
            return Ok(());
        };
        self.txn.delete(instance(key));
        let flow_scope = value.record().flow_scope_key;
        if flow_scope > 0 {
            self.txn.delete(child(flow_scope, key));
            self.update(flow_scope, |scope| scope.active_children -= 1)?;
        }
        Ok(())
    }

    pub fn add_taken_flow(&mut self, flow_scope: i64, gateway: &str, flow: &str) -> Result<()> {
        let key = taken(flow_scope, gateway, flow);
        let count = read_count(self.txn.get(&key)?) + 1;
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
        let count = read_count(self.txn.get(&key)?);
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
