//! Partition-wide bookkeeping: the last processed command position, the key generator, the
//! pinned clock and the state's format version (`format.rs`). Each is written in the same
//! batch as the state it describes.

use beeline_protocol::key;
use beeline_state::{ColumnFamily, KeyBuilder, Result, Transaction};

const LAST_PROCESSED_POSITION: u32 = 1;
const NEXT_KEY_COUNTER: u32 = 2;
const PINNED_CLOCK: u32 = 3;
pub(super) const FORMAT_VERSION: u32 = 4;

pub(super) fn meta_key(id: u32) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::Meta).u32(id).build()
}

fn read_i64(txn: &Transaction<'_>, id: u32) -> Result<Option<i64>> {
    super::read_int(
        ColumnFamily::Meta,
        txn.get(&meta_key(id))?,
        i64::from_be_bytes,
    )
}

pub struct MetaState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> MetaState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    /// Position of the last command whose results are in this state; -1 before the first.
    pub fn last_processed_position(&self) -> Result<i64> {
        Ok(read_i64(self.txn, LAST_PROCESSED_POSITION)?.unwrap_or(-1))
    }

    /// The counter the next key will carry.
    pub fn next_key_counter(&self) -> Result<i64> {
        Ok(read_i64(self.txn, NEXT_KEY_COUNTER)?.unwrap_or(1))
    }

    /// The instant (ms since the epoch) the partition's clock is pinned at, if it is.
    pub fn pinned_clock(&self) -> Result<Option<i64>> {
        read_i64(self.txn, PINNED_CLOCK)
    }
}

pub struct MutableMetaState<'t, 's> {
    txn: &'t mut Transaction<'s>,
    partition_id: u16,
}

impl<'t, 's> MutableMetaState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>, partition_id: u16) -> Self {
        Self { txn, partition_id }
    }

    pub fn set_last_processed_position(&mut self, position: i64) {
        self.txn.put(
            meta_key(LAST_PROCESSED_POSITION),
            position.to_be_bytes().to_vec(),
        );
    }

    /// The partition's time stands at `time` (ms since the epoch) until reset.
    pub fn pin_clock(&mut self, time: i64) {
        self.txn
            .put(meta_key(PINNED_CLOCK), time.to_be_bytes().to_vec());
    }

    /// The partition's time is the system clock's again.
    pub fn reset_clock(&mut self) {
        self.txn.delete(meta_key(PINNED_CLOCK));
    }

    /// Takes the next key of this partition.
    pub fn next_key(&mut self) -> Result<i64> {
        let counter = read_i64(self.txn, NEXT_KEY_COUNTER)?.unwrap_or(1);
        self.txn.put(
            meta_key(NEXT_KEY_COUNTER),
            (counter + 1).to_be_bytes().to_vec(),
        );
        Ok(key::encode(self.partition_id, counter))
    }

    /// Replay: makes sure keys seen in the log are never handed out again.
    pub fn observe_key(&mut self, key: i64) -> Result<()> {
        if key::partition_of(key) != Some(self.partition_id) {
            return Ok(());
        }
        let counter = key::counter_of(key);
        let next = read_i64(self.txn, NEXT_KEY_COUNTER)?.unwrap_or(1);
        if counter >= next {
            self.txn.put(
                meta_key(NEXT_KEY_COUNTER),
                (counter + 1).to_be_bytes().to_vec(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Caches;
    use crate::state::EngineState;
    use crate::transient::Transient;
    use beeline_state::{MemStore, Store, WriteBatch};

    #[test]
    fn a_damaged_key_counter_is_an_error_not_a_fresh_start() {
        let store = MemStore::new();
        let mut batch = WriteBatch::default();
        batch.put(meta_key(NEXT_KEY_COUNTER), vec![0, 0, 7]);
        store.write(batch).unwrap();
        let (caches, transient) = (Caches::default(), Transient::default());
        let state = EngineState::new(&store, 1, &caches, &transient);
        let error = state.meta().next_key_counter().unwrap_err();
        assert_eq!(
            error.to_string(),
            "undecodable state in column family Meta: an integer of 8 bytes is stored as 3"
        );
    }
}
