//! Message subscriptions on the process instance's partition: which element instance waits
//! for which message, and which openings and closings the message's partition has not
//! confirmed yet.

use beeline_protocol::value::ProcessMessageSubscriptionRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::values::{StoredProcessMessageSubscription, SubscriptionLifecycle};
use super::{decode_stored, subscription_name};

fn subscription(element_instance_key: i64, message_name: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ProcessMessageSubscriptions)
        .i64(element_instance_key)
        .str(message_name)
        .build()
}

fn pending(element_instance_key: i64, message_name: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ProcessMessageSubscriptionsPending)
        .i64(element_instance_key)
        .str(message_name)
        .build()
}

pub struct ProcessMessageSubscriptionState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> ProcessMessageSubscriptionState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(
        &self,
        element_instance_key: i64,
        message_name: &str,
    ) -> Result<Option<StoredProcessMessageSubscription>> {
        self.txn
            .get(&subscription(element_instance_key, message_name))?
            .map(|bytes| {
                decode_stored(
                    ColumnFamily::ProcessMessageSubscriptions,
                    subscription_name(element_instance_key, message_name),
                    &bytes,
                )
            })
            .transpose()
    }

    /// The subscriptions of an element instance.
    pub fn of_element_instance(
        &self,
        element_instance_key: i64,
    ) -> Result<Vec<StoredProcessMessageSubscription>> {
        let prefix = KeyBuilder::new(ColumnFamily::ProcessMessageSubscriptions)
            .i64(element_instance_key)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, value) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::ProcessMessageSubscriptions, &key)?;
            reader.i64()?;
            found.push(decode_stored(
                ColumnFamily::ProcessMessageSubscriptions,
                subscription_name(element_instance_key, reader.str()?),
                &value,
            )?);
        }
        Ok(found)
    }

    /// Subscriptions opening or closing, unconfirmed since `before` or earlier.
    pub fn pending_since(&self, before: i64) -> Result<Vec<StoredProcessMessageSubscription>> {
        let mut found = Vec::new();
        for (element_instance_key, name) in super::pending_since(
            self.txn,
            ColumnFamily::ProcessMessageSubscriptionsPending,
            before,
        )? {
            if let Some(stored) = self.get(element_instance_key, &name)? {
                found.push(stored);
            }
        }
        Ok(found)
    }
}

pub struct MutableProcessMessageSubscriptionState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableProcessMessageSubscriptionState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    /// Stores the subscription in `state` (pending when opening or closing, since `now`).
    pub fn put(
        &mut self,
        key: i64,
        record: &ProcessMessageSubscriptionRecord,
        state: SubscriptionLifecycle,
        now: i64,
    ) {
        let stored = StoredProcessMessageSubscription {
            key,
            record: Some(record.clone()),
            state: state as u32,
        };
        self.txn.put(
            subscription(record.element_instance_key, &record.message_name),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        let pending_key = pending(record.element_instance_key, &record.message_name);
        if state == SubscriptionLifecycle::Created {
            self.txn.delete(pending_key);
        } else {
            self.txn.put(pending_key, now.to_be_bytes().to_vec());
        }
    }

    pub fn remove(&mut self, element_instance_key: i64, message_name: &str) {
        self.txn
            .delete(subscription(element_instance_key, message_name));
        self.txn.delete(pending(element_instance_key, message_name));
    }
}
