//! Published messages, indexed by key, by name and correlation key, by deadline and by id.

use beeline_protocol::value::MessageRecord;
use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Result, Transaction};

use super::decode;

fn by_key(message_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Messages)
        .i64(message_key)
        .build()
}

fn by_name(name: &str, correlation_key: &str, message_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessagesByNameAndCorrelationKey)
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

fn by_id(name: &str, correlation_key: &str, message_id: &str) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MessageIds)
        .str(name)
        .str(correlation_key)
        .str(message_id)
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

    /// Whether a message with this name, correlation key and id is buffered.
    pub fn exists_with_id(
        &self,
        name: &str,
        correlation_key: &str,
        message_id: &str,
    ) -> Result<bool> {
        self.txn.exists(&by_id(name, correlation_key, message_id))
    }

    /// Keys of buffered messages with this name and correlation key, oldest first.
    pub fn keys_by_name(&self, name: &str, correlation_key: &str) -> Result<Vec<i64>> {
        let prefix = KeyBuilder::new(ColumnFamily::MessagesByNameAndCorrelationKey)
            .str(name)
            .str(correlation_key)
            .build();
        let mut keys = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::MessagesByNameAndCorrelationKey, &key)?;
            reader.str()?;
            reader.str()?;
            keys.push(reader.i64()?);
        }
        Ok(keys)
    }

    /// Messages whose deadline is at or before `now`, earliest first, at most `limit`.
    pub fn expired(&self, now: i64, limit: usize) -> Result<Vec<(i64, i64)>> {
        let prefix = KeyBuilder::new(ColumnFamily::MessageDeadlines).build();
        let mut due = Vec::new();
        for entry in self.txn.scan(&prefix) {
            let (key, _) = entry?;
            let mut reader = KeyReader::new(ColumnFamily::MessageDeadlines, &key)?;
            let deadline = reader.i64()?;
            if deadline > now || due.len() >= limit {
                break;
            }
            due.push((deadline, reader.i64()?));
        }
        Ok(due)
    }

    /// The earliest deadline of any buffered message.
    pub fn next_deadline(&self) -> Result<Option<i64>> {
        let prefix = KeyBuilder::new(ColumnFamily::MessageDeadlines).build();
        match self.txn.scan(&prefix).next() {
            None => Ok(None),
            Some(entry) => {
                let (key, _) = entry?;
                Ok(Some(
                    KeyReader::new(ColumnFamily::MessageDeadlines, &key)?.i64()?,
                ))
            }
        }
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
        self.txn
            .insert(by_key(message_key), prost::Message::encode_to_vec(message));
        self.txn.insert(
            by_name(&message.name, &message.correlation_key, message_key),
            Vec::new(),
        );
        self.txn
            .insert(by_deadline(message.deadline, message_key), Vec::new());
        if !message.message_id.is_empty() {
            self.txn.insert(
                by_id(&message.name, &message.correlation_key, &message.message_id),
                message_key.to_be_bytes().to_vec(),
            );
        }
    }

    pub fn remove(&mut self, message_key: i64, message: &MessageRecord) {
        self.txn.delete(by_key(message_key));
        self.txn.delete(by_name(
            &message.name,
            &message.correlation_key,
            message_key,
        ));
        self.txn.delete(by_deadline(message.deadline, message_key));
        if !message.message_id.is_empty() {
            self.txn.delete(by_id(
                &message.name,
                &message.correlation_key,
                &message.message_id,
            ));
        }
    }
}
