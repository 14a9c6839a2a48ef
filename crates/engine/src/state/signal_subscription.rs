//! Signal subscriptions, by signal name (to trigger them when a signal is broadcast) and by
//! what they belong to (the element instance, or the process definition of a signal start
//! event), to close them.

use beeline_protocol::value::SignalSubscriptionRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode;

fn subscription(signal_name: &str, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::SignalSubscriptions)
        .str(signal_name)
        .i64(key)
        .build()
}

fn by_scope(scope: i64, key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::SignalSubscriptionsByScope)
        .i64(scope)
        .i64(key)
        .build()
}

/// What a subscription belongs to: its element instance, or for a signal start event its
/// process definition.
pub fn scope_of(record: &SignalSubscriptionRecord) -> i64 {
    if record.catch_event_instance_key > 0 {
        record.catch_event_instance_key
    } else {
        record.process_definition_key
    }
}

pub struct SignalSubscriptionState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> SignalSubscriptionState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    /// A tenant's subscriptions to a signal name, oldest first: (key, subscription).
    pub fn by_name(
        &self,
        tenant: &str,
        signal_name: &str,
    ) -> Result<Vec<(i64, SignalSubscriptionRecord)>> {
        let prefix = KeyBuilder::new(ColumnFamily::SignalSubscriptions)
            .str(signal_name)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, value) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::SignalSubscriptions, &key)?;
            reader.str()?;
            let key = reader.i64()?;
            let record: SignalSubscriptionRecord =
                decode(ColumnFamily::SignalSubscriptions, &value)?;
            if record.tenant_id == tenant {
                found.push((key, record));
            }
        }
        Ok(found)
    }

    /// Subscriptions of an element instance (or of a process definition's start events).
    pub fn of_scope(&self, scope: i64) -> Result<Vec<(i64, SignalSubscriptionRecord)>> {
        let prefix = KeyBuilder::new(ColumnFamily::SignalSubscriptionsByScope)
            .i64(scope)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, name) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::SignalSubscriptionsByScope, &key)?;
            reader.i64()?;
            let key = reader.i64()?;
            let name = String::from_utf8_lossy(&name);
            if let Some(bytes) = self.txn.get(&subscription(&name, key))? {
                found.push((key, decode(ColumnFamily::SignalSubscriptions, &bytes)?));
            }
        }
        Ok(found)
    }
}

pub struct MutableSignalSubscriptionState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableSignalSubscriptionState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    pub fn insert(&mut self, key: i64, record: &SignalSubscriptionRecord) {
        self.txn.insert(
            subscription(&record.signal_name, key),
            beeline_protocol::protobuf::encode_to_vec(record),
        );
        self.txn.insert(
            by_scope(scope_of(record), key),
            record.signal_name.as_bytes().to_vec(),
        );
    }

    pub fn remove(&mut self, key: i64, record: &SignalSubscriptionRecord) {
        self.txn.delete(subscription(&record.signal_name, key));
        self.txn.delete(by_scope(scope_of(record), key));
    }
}
