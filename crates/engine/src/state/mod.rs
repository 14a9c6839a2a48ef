//! Engine state: one typed view per domain over the batch's transaction. Views named
//! `XState` only read; their `MutableXState` twins write and are reachable only through
//! `&mut EngineState`, which only appliers (and the engine's own bookkeeping) get.

mod banned;
mod message;
mod meta;

pub use banned::{BannedInstanceState, MutableBannedInstanceState};
pub use message::{MessageState, MutableMessageState};
pub use meta::{MetaState, MutableMetaState};

use beeline_state::{Store, Transaction, WriteBatch};

pub struct EngineState<'s> {
    txn: Transaction<'s>,
    partition_id: u16,
}

impl<'s> EngineState<'s> {
    pub fn new(store: &'s dyn Store, partition_id: u16) -> Self {
        Self {
            txn: Transaction::new(store),
            partition_id,
        }
    }

    pub fn partition_id(&self) -> u16 {
        self.partition_id
    }

    pub fn meta(&self) -> MetaState<'_> {
        MetaState::new(&self.txn)
    }

    pub fn meta_mut(&mut self) -> MutableMetaState<'_, 's> {
        MutableMetaState::new(&mut self.txn, self.partition_id)
    }

    pub fn messages(&self) -> MessageState<'_> {
        MessageState::new(&self.txn)
    }

    pub fn messages_mut(&mut self) -> MutableMessageState<'_, 's> {
        MutableMessageState::new(&mut self.txn)
    }

    pub fn banned_instances(&self) -> BannedInstanceState<'_> {
        BannedInstanceState::new(&self.txn)
    }

    pub fn banned_instances_mut(&mut self) -> MutableBannedInstanceState<'_, 's> {
        MutableBannedInstanceState::new(&mut self.txn)
    }

    /// The batch's writes, to be stored once the batch is in the log.
    pub fn into_writes(mut self) -> WriteBatch {
        self.txn.take_batch()
    }
}

/// Decodes a protobuf value stored in `cf`.
pub(crate) fn decode<M: prost::Message + Default>(
    cf: beeline_state::ColumnFamily,
    bytes: &[u8],
) -> beeline_state::Result<M> {
    M::decode(bytes).map_err(|e| beeline_state::Error::Decode {
        cf: cf.name(),
        reason: e.to_string(),
    })
}
