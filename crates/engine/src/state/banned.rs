//! Process instances banned after an unexpected processing error: their commands are rejected
//! from then on, so one broken instance cannot stall the partition.

use beeline_state::{ColumnFamily, KeyBuilder, Result, Transaction};

fn key(instance_key: i64) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::BannedInstances)
        .i64(instance_key)
        .build()
}

pub struct BannedInstanceState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> BannedInstanceState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    pub fn is_banned(&self, instance_key: i64) -> Result<bool> {
        self.txn.exists(&key(instance_key))
    }
}

pub struct MutableBannedInstanceState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableBannedInstanceState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    pub fn ban(&mut self, instance_key: i64) {
        self.txn.put(key(instance_key), Vec::new());
    }
}
