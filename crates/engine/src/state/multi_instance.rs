//! The input collections of multi-instance bodies: evaluated once, when the body is
//! activated, and read an item at a time as each inner instance starts (a collection of
//! 10,000 items is not read 10,000 times).

use beeline_state::{ColumnFamily, KeyBuilder, Result, Transaction};

fn item(body: i64, index: u32) -> Vec<u8> {
    KeyBuilder::new(ColumnFamily::MultiInstanceInputCollections)
        .i64(body)
        .u32(index)
        .build()
}

pub struct MultiInstanceState<'t> {
    txn: &'t Transaction<'t>,
}

impl<'t> MultiInstanceState<'t> {
    pub(super) fn new(txn: &'t Transaction<'t>) -> Self {
        Self { txn }
    }

    /// Item `index` (from 0) of the body's input collection, as JSON text.
    pub fn input_item(&self, body: i64, index: u32) -> Result<Option<String>> {
        Ok(self
            .txn
            .get(&item(body, index))?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }
}

pub struct MutableMultiInstanceState<'t, 's> {
    txn: &'t mut Transaction<'s>,
}

impl<'t, 's> MutableMultiInstanceState<'t, 's> {
    pub(super) fn new(txn: &'t mut Transaction<'s>) -> Self {
        Self { txn }
    }

    /// Stores the body's input collection (the body is new: nothing is there yet).
    pub fn set_input_collection(&mut self, body: i64, items: &[String]) {
        for (index, value) in (0u32..).zip(items) {
            self.txn
                .insert(item(body, index), value.as_bytes().to_vec());
        }
    }

    /// Forgets the input collection of a body that ended.
    pub fn remove_input_collection(&mut self, body: i64, size: i32) {
        for index in 0..u32::try_from(size).unwrap_or(0) {
            self.txn.delete(item(body, index));
        }
    }
}
