//! Message start events of the latest process versions, by message name (to start instances
//! when a message is published) and by process (to close them when a new version replaces
//! them).

use beeline_protocol::value::MessageStartEventSubscriptionRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode_stored;
use super::values::StoredMessageStartEventSubscription;

/// How errors name a message start event subscription.
fn start_subscription_name(message_name: &str, process_definition_key: i64) -> String {
    format!("(message '{message_name}', process definition {process_definition_key})")
}

fn subscription(message_name: &str, process_definition_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageStartEventSubscriptions)
        .str(message_name)
        .i64(process_definition_key)
        .build()
}

fn by_process(process_definition_key: i64, message_name: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageStartEventSubscriptionsByProcess)
        .i64(process_definition_key)
        .str(message_name)
        .build()
}

pub struct MessageStartSubscriptionState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> MessageStartSubscriptionState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    /// A tenant's start events waiting for messages named `message_name`.
    pub fn by_name(
        &self,
        tenant: &str,
        message_name: &str,
    ) -> Result<Vec<StoredMessageStartEventSubscription>> {
        let prefix = KeyBuilder::new(ColumnFamily::MessageStartEventSubscriptions)
            .str(message_name)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, value) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::MessageStartEventSubscriptions, &key)?;
            reader.str()?;
            let stored: StoredMessageStartEventSubscription = decode_stored(
                ColumnFamily::MessageStartEventSubscriptions,
                start_subscription_name(message_name, reader.i64()?),
                &value,
            )?;
            if stored
                .record
                .as_ref()
                .is_some_and(|r| r.tenant_id == tenant)
            {
                found.push(stored);
            }
        }
        Ok(found)
    }

    /// The message start events of a process definition.
    pub fn of_process(
        &self,
        process_definition_key: i64,
    ) -> Result<Vec<StoredMessageStartEventSubscription>> {
        let prefix = KeyBuilder::new(ColumnFamily::MessageStartEventSubscriptionsByProcess)
            .i64(process_definition_key)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader =
                KeyReader::new(ColumnFamily::MessageStartEventSubscriptionsByProcess, &key)?;
            reader.i64()?;
            let name = reader.str()?;
            if let Some(bytes) = self.txn.get(&subscription(name, process_definition_key))? {
                found.push(decode_stored(
                    ColumnFamily::MessageStartEventSubscriptions,
                    start_subscription_name(name, process_definition_key),
                    &bytes,
                )?);
            }
        }
        Ok(found)
    }
}

pub struct MutableMessageStartSubscriptionState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableMessageStartSubscriptionState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    pub fn insert(&mut self, key: i64, record: &MessageStartEventSubscriptionRecord) {
        let stored = StoredMessageStartEventSubscription {
            key,
            record: Some(record.clone()),
        };
        self.txn.insert(
            subscription(&record.message_name, record.process_definition_key),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        self.txn.insert(
            by_process(record.process_definition_key, &record.message_name),
            Vec::new(),
        );
    }

    pub fn remove(&mut self, record: &MessageStartEventSubscriptionRecord) {
        self.txn.delete(subscription(
            &record.message_name,
            record.process_definition_key,
        ));
        self.txn.delete(by_process(
            record.process_definition_key,
            &record.message_name,
        ));
    }
}
