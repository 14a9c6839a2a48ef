//! Published messages, indexed by key, by name and correlation key, by deadline and by id.

use beeline_protocol::value::MessageRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::time_index::{due, first_time};
use super::values::CorrelationKeyLock;
use super::{decode, read_int};

fn by_key(message_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Messages)
        .i64(message_key)
        .build()
}

fn by_name(tenant: &str, name: &str, correlation_key: &str, message_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessagesByNameAndCorrelationKey)
        .str(tenant)
        .str(name)
        .str(correlation_key)
        .i64(message_key)
        .build()
}

fn by_deadline(deadline: i64, message_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageDeadlines)
        .i64(deadline)
        .i64(message_key)
        .build()
}

fn by_id(tenant: &str, name: &str, correlation_key: &str, message_id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageIds)
        .str(tenant)
        .str(name)
        .str(correlation_key)
        .str(message_id)
        .build()
}

fn correlation(message_key: i64, bpmn_process_id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageCorrelations)
        .i64(message_key)
        .str(bpmn_process_id)
        .build()
}

fn active_instance(tenant: &str, bpmn_process_id: &str, correlation_key: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::ActiveInstancesByCorrelationKey)
        .str(tenant)
        .str(bpmn_process_id)
        .str(correlation_key)
        .build()
}

fn key_of_instance(process_instance_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::CorrelationKeysByInstance)
        .i64(process_instance_key)
        .build()
}

pub struct MessageState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> MessageState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn get(&self, message_key: i64) -> Result<Option<MessageRecord>> {
        self.txn
            .get(&by_key(message_key))?
            .map(|bytes| decode(ColumnFamily::Messages, &bytes))
            .transpose()
    }

    /// Whether a message of the tenant with this name, correlation key and id is buffered.
    pub fn exists_with_id(
        &self,
        tenant: &str,
        name: &str,
        correlation_key: &str,
        message_id: &str,
    ) -> Result<bool> {
        self.txn
            .exists(&by_id(tenant, name, correlation_key, message_id))
    }

    /// Keys of the tenant's buffered messages with this name and correlation key, oldest
    /// first.
    pub fn keys_by_name(
        &self,
        tenant: &str,
        name: &str,
        correlation_key: &str,
    ) -> Result<Vec<i64>> {
        let prefix = KeyBuilder::new(ColumnFamily::MessagesByNameAndCorrelationKey)
            .str(tenant)
            .str(name)
            .str(correlation_key)
            .build();
        let mut keys = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::MessagesByNameAndCorrelationKey, &key)?;
            reader.str()?;
            reader.str()?;
            reader.str()?;
            keys.push(reader.i64()?);
        }
        Ok(keys)
    }

    /// Messages whose deadline is at or before `now`, earliest first, at most `limit`.
    pub fn expired(&self, now: i64, limit: usize) -> Result<Vec<(i64, i64)>> {
        due(self.txn, ColumnFamily::MessageDeadlines, now, limit)
    }

    /// The earliest deadline of any buffered message.
    pub fn next_deadline(&self) -> Result<Option<i64>> {
        first_time(self.txn, ColumnFamily::MessageDeadlines)
    }

    /// Whether the message was correlated to an instance of the process `bpmn_process_id`
    /// already (a message correlates at most once per process).
    pub fn is_correlated(&self, message_key: i64, bpmn_process_id: &str) -> Result<bool> {
        self.txn.exists(&correlation(message_key, bpmn_process_id))
    }

    /// The instance of a tenant's process a message with this correlation key started and
    /// that is still active.
    pub fn active_instance(
        &self,
        tenant: &str,
        bpmn_process_id: &str,
        correlation_key: &str,
    ) -> Result<Option<i64>> {
        self.txn
            .get(&active_instance(tenant, bpmn_process_id, correlation_key))
            .and_then(|bytes| {
                read_int(
                    ColumnFamily::ActiveInstancesByCorrelationKey,
                    bytes,
                    i64::from_be_bytes,
                )
            })
    }

    /// The correlation key an instance holds (with its tenant and BPMN process id), if a
    /// message started it.
    pub fn correlation_key_of(
        &self,
        process_instance_key: i64,
    ) -> Result<Option<CorrelationKeyLock>> {
        self.txn
            .get(&key_of_instance(process_instance_key))?
            .map(|bytes| decode(ColumnFamily::CorrelationKeysByInstance, &bytes))
            .transpose()
    }
}

pub struct MutableMessageState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableMessageState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    /// Stores a newly published message (its key is new, so are all its index entries).
    pub fn insert(&mut self, message_key: i64, message: &MessageRecord) {
        self.txn.insert(
            by_key(message_key),
            beeline_protocol::protobuf::encode_to_vec(message),
        );
        self.txn.insert(
            by_name(
                &message.tenant_id,
                &message.name,
                &message.correlation_key,
                message_key,
            ),
            Vec::new(),
        );
        self.txn
            .insert(by_deadline(message.deadline, message_key), Vec::new());
        if !message.message_id.is_empty() {
            self.txn.insert(
                by_id(
                    &message.tenant_id,
                    &message.name,
                    &message.correlation_key,
                    &message.message_id,
                ),
                message_key.to_be_bytes().to_vec(),
            );
        }
    }

    pub fn remove(&mut self, message_key: i64, message: &MessageRecord) {
        self.txn.delete(by_key(message_key));
        self.txn.delete(by_name(
            &message.tenant_id,
            &message.name,
            &message.correlation_key,
            message_key,
        ));
        self.txn.delete(by_deadline(message.deadline, message_key));
        if !message.message_id.is_empty() {
            self.txn.delete(by_id(
                &message.tenant_id,
                &message.name,
                &message.correlation_key,
                &message.message_id,
            ));
        }
        let prefix = KeyBuilder::new(ColumnFamily::MessageCorrelations)
            .i64(message_key)
            .build();
        let correlations: Vec<Vec<u8>> = self
            .txn
            .scan(&prefix)
            .filter_map(|entry| entry.ok().map(|(key, _)| key))
            .collect();
        for key in correlations {
            self.txn.delete(key);
        }
    }

    pub fn put_correlation(&mut self, message_key: i64, bpmn_process_id: &str) {
        self.txn
            .put(correlation(message_key, bpmn_process_id), Vec::new());
    }

    pub fn remove_correlation(&mut self, message_key: i64, bpmn_process_id: &str) {
        self.txn.delete(correlation(message_key, bpmn_process_id));
    }

    /// Locks the correlation key (of a tenant's process) for the instance a message started.
    pub fn lock_correlation_key(&mut self, lock: CorrelationKeyLock, process_instance_key: i64) {
        self.txn.put(
            active_instance(
                &lock.tenant_id,
                &lock.bpmn_process_id,
                &lock.correlation_key,
            ),
            process_instance_key.to_be_bytes().to_vec(),
        );
        self.txn.put(
            key_of_instance(process_instance_key),
            beeline_protocol::protobuf::encode_to_vec(&lock),
        );
    }

    /// Releases the correlation key an ended instance held, if any.
    pub fn release_correlation_key(&mut self, process_instance_key: i64) -> Result<()> {
        if let Some(lock) = MessageState::new(self.txn).correlation_key_of(process_instance_key)? {
            self.txn.delete(active_instance(
                &lock.tenant_id,
                &lock.bpmn_process_id,
                &lock.correlation_key,
            ));
            self.txn.delete(key_of_instance(process_instance_key));
        }
        Ok(())
    }
}
