//! Message subscriptions on the partition of the message's correlation key: what the
//! published messages correlate to, and which correlations the instance's partition has not
//! confirmed yet.

use beeline_protocol::value::MessageSubscriptionRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::values::StoredMessageSubscription;
use super::{decode_stored, subscription_name};

fn subscription(element_instance_key: i64, message_name: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageSubscriptions)
        .i64(element_instance_key)
        .str(message_name)
        .build()
}

fn by_name(message_name: &str, correlation_key: &str, element_instance_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageSubscriptionsByNameAndCorrelationKey)
        .str(message_name)
        .str(correlation_key)
        .i64(element_instance_key)
        .build()
}

fn correlating(element_instance_key: i64, message_name: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageSubscriptionsCorrelating)
        .i64(element_instance_key)
        .str(message_name)
        .build()
}

pub struct MessageSubscriptionState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> MessageSubscriptionState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(
        &self,
        element_instance_key: i64,
        message_name: &str,
    ) -> Result<Option<StoredMessageSubscription>> {
        self.txn
            .get(&subscription(element_instance_key, message_name))?
            .map(|bytes| {
                decode_stored(
                    ColumnFamily::MessageSubscriptions,
                    subscription_name(element_instance_key, message_name),
                    &bytes,
                )
            })
            .transpose()
    }

    /// A tenant's subscriptions for a message name and correlation key, in element instance
    /// order.
    pub fn by_name(
        &self,
        tenant: &str,
        message_name: &str,
        correlation_key: &str,
    ) -> Result<Vec<StoredMessageSubscription>> {
        let prefix = KeyBuilder::new(ColumnFamily::MessageSubscriptionsByNameAndCorrelationKey)
            .str(message_name)
            .str(correlation_key)
            .build();
        let mut found = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(
                ColumnFamily::MessageSubscriptionsByNameAndCorrelationKey,
                &key,
            )?;
            reader.str()?;
            reader.str()?;
            if let Some(stored) = self.get(reader.i64()?, message_name)?
                && stored
                    .record
                    .as_ref()
                    .is_some_and(|r| r.tenant_id == tenant)
            {
                found.push(stored);
            }
        }
        Ok(found)
    }

    /// Subscriptions whose correlation the instance's partition has not confirmed since
    /// `before` or earlier.
    pub fn correlating_since(&self, before: i64) -> Result<Vec<StoredMessageSubscription>> {
        let mut found = Vec::new();
        for (element_instance_key, name) in super::pending_since(
            self.txn,
            ColumnFamily::MessageSubscriptionsCorrelating,
            before,
        )? {
            if let Some(stored) = self.get(element_instance_key, &name)? {
                found.push(stored);
            }
        }
        Ok(found)
    }
}

pub struct MutableMessageSubscriptionState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableMessageSubscriptionState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    pub fn insert(&mut self, key: i64, record: &MessageSubscriptionRecord) {
        let stored = StoredMessageSubscription {
            key,
            record: Some(record.clone()),
            correlating: false,
        };
        self.txn.insert(
            subscription(record.element_instance_key, &record.message_name),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        self.txn.insert(
            by_name(
                &record.message_name,
                &record.correlation_key,
                record.element_instance_key,
            ),
            Vec::new(),
        );
    }

    fn update(
        &mut self,
        record: &MessageSubscriptionRecord,
        change: impl FnOnce(&mut StoredMessageSubscription),
    ) -> Result<()> {
        let Some(mut stored) = MessageSubscriptionState::new(self.txn)
            .get(record.element_instance_key, &record.message_name)?
        else {
            return Ok(());
        };
        change(&mut stored);
        self.txn.put(
            subscription(record.element_instance_key, &record.message_name),
            beeline_protocol::protobuf::encode_to_vec(&stored),
        );
        Ok(())
    }

    /// A message is being correlated: remember it until the instance's partition confirms.
    pub fn correlating(&mut self, record: &MessageSubscriptionRecord, now: i64) -> Result<()> {
        self.update(record, |stored| {
            stored.correlating = true;
            if let Some(r) = stored.record.as_mut() {
                r.message_key = record.message_key;
                r.variables = record.variables.clone();
            }
        })?;
        self.txn.put(
            correlating(record.element_instance_key, &record.message_name),
            now.to_be_bytes().to_vec(),
        );
        Ok(())
    }

    /// The correlation is over (confirmed or refused): the subscription takes the next one.
    pub fn correlated(&mut self, record: &MessageSubscriptionRecord) -> Result<()> {
        self.update(record, |stored| stored.correlating = false)?;
        self.txn.delete(correlating(
            record.element_instance_key,
            &record.message_name,
        ));
        Ok(())
    }

    /// The instance's partition answered (refused): the correlation is not sent again.
    pub fn stop_retrying(&mut self, record: &MessageSubscriptionRecord) {
        self.txn.delete(correlating(
            record.element_instance_key,
            &record.message_name,
        ));
    }

    pub fn remove(&mut self, element_instance_key: i64, message_name: &str) -> Result<()> {
        let Some(stored) =
            MessageSubscriptionState::new(self.txn).get(element_instance_key, message_name)?
        else {
            return Ok(());
        };
        let record = stored.record();
        self.txn
            .delete(subscription(element_instance_key, message_name));
        self.txn.delete(by_name(
            message_name,
            &record.correlation_key,
            element_instance_key,
        ));
        self.txn
            .delete(correlating(element_instance_key, message_name));
        Ok(())
    }
}
