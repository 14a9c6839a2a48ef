//! Engine state: one typed view per domain over the batch's transaction. Views named
//! `XState` only read; their `MutableXState` twins write and are reachable only through
//! `&mut EngineState`, which only appliers (and the engine's own bookkeeping) get.

mod banned;
mod decision;
mod element_instance;
mod event_trigger;
mod form;
pub mod format;
mod incident;
mod job;
mod message;
mod message_start_subscription;
mod message_subscription;
mod meta;
mod multi_instance;
mod process;
mod process_message_subscription;
mod signal_subscription;
mod time_index;
mod timer;
mod user_task;
pub mod values;
mod variable;
mod versions;

pub use banned::{BannedInstanceState, MutableBannedInstanceState};
pub use decision::{DecisionState, MutableDecisionState};
pub use element_instance::{ElementInstanceState, MutableElementInstanceState};
pub use event_trigger::{EventTriggerState, MutableEventTriggerState};
pub use form::{FormState, MutableFormState};
pub use incident::{IncidentState, MutableIncidentState};
pub use job::{JobState, MutableJobState};
pub use message::{MessageState, MutableMessageState};
pub use message_start_subscription::{
    MessageStartSubscriptionState, MutableMessageStartSubscriptionState,
};
pub use message_subscription::{MessageSubscriptionState, MutableMessageSubscriptionState};
pub use meta::{MetaState, MutableMetaState};
pub use multi_instance::{MultiInstanceState, MutableMultiInstanceState};
pub use process::{MutableProcessState, ProcessState};
pub use process_message_subscription::{
    MutableProcessMessageSubscriptionState, ProcessMessageSubscriptionState,
};
pub use signal_subscription::{MutableSignalSubscriptionState, SignalSubscriptionState};
pub use timer::{MutableTimerState, TimerState};
pub use user_task::{MutableUserTaskState, UserTaskState};
pub use variable::{MutableVariableState, VariableState, document};

use beeline_state::{Store, Transaction, WriteBatch};

use crate::model::Caches;
use crate::transient::Transient;

pub struct EngineState<'s> {
    txn: Transaction<'s>,
    instances: element_instance::InstanceCache,
    partition_id: u16,
    caches: &'s Caches,
    transient: &'s Transient,
}

impl<'s> EngineState<'s> {
    pub fn new(
        store: &'s dyn Store,
        partition_id: u16,
        caches: &'s Caches,
        transient: &'s Transient,
    ) -> Self {
        Self {
            txn: Transaction::new(store),
            instances: Default::default(),
            partition_id,
            caches,
            transient,
        }
    }

    pub fn partition_id(&self) -> u16 {
        self.partition_id
    }

    /// What the engine keeps outside the log (who waits for which instance's result).
    pub fn transient(&self) -> &'s Transient {
        self.transient
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

    pub fn processes(&self) -> ProcessState<'_> {
        ProcessState::new(&self.txn, &self.caches.processes)
    }

    pub fn processes_mut(&mut self) -> MutableProcessState<'_, 's> {
        MutableProcessState::new(&mut self.txn, &self.caches.processes)
    }

    pub fn decisions(&self) -> DecisionState<'_> {
        DecisionState::new(&self.txn, &self.caches.decisions)
    }

    pub fn decisions_mut(&mut self) -> MutableDecisionState<'_, 's> {
        MutableDecisionState::new(&mut self.txn)
    }

    pub fn element_instances(&self) -> ElementInstanceState<'_> {
        ElementInstanceState::new(&self.txn, &self.instances)
    }

    pub fn element_instances_mut(&mut self) -> MutableElementInstanceState<'_, 's> {
        MutableElementInstanceState::new(&mut self.txn, &self.instances)
    }

    pub fn forms(&self) -> FormState<'_> {
        FormState::new(&self.txn)
    }

    pub fn forms_mut(&mut self) -> MutableFormState<'_, 's> {
        MutableFormState::new(&mut self.txn)
    }

    pub fn user_tasks(&self) -> UserTaskState<'_> {
        UserTaskState::new(&self.txn)
    }

    pub fn user_tasks_mut(&mut self) -> MutableUserTaskState<'_, 's> {
        MutableUserTaskState::new(&mut self.txn)
    }

    pub fn multi_instance(&self) -> MultiInstanceState<'_> {
        MultiInstanceState::new(&self.txn)
    }

    pub fn multi_instance_mut(&mut self) -> MutableMultiInstanceState<'_, 's> {
        MutableMultiInstanceState::new(&mut self.txn)
    }

    pub fn event_triggers(&self) -> EventTriggerState<'_> {
        EventTriggerState::new(&self.txn)
    }

    pub fn event_triggers_mut(&mut self) -> MutableEventTriggerState<'_, 's> {
        MutableEventTriggerState::new(&mut self.txn)
    }

    pub fn variables(&self) -> VariableState<'_> {
        VariableState::new(&self.txn)
    }

    pub fn variables_mut(&mut self) -> MutableVariableState<'_, 's> {
        MutableVariableState::new(&mut self.txn)
    }

    pub fn jobs(&self) -> JobState<'_> {
        JobState::new(&self.txn)
    }

    pub fn jobs_mut(&mut self) -> MutableJobState<'_, 's> {
        MutableJobState::new(&mut self.txn)
    }

    pub fn incidents(&self) -> IncidentState<'_> {
        IncidentState::new(&self.txn)
    }

    pub fn incidents_mut(&mut self) -> MutableIncidentState<'_, 's> {
        MutableIncidentState::new(&mut self.txn)
    }

    pub fn timers(&self) -> TimerState<'_> {
        TimerState::new(&self.txn)
    }

    pub fn timers_mut(&mut self) -> MutableTimerState<'_, 's> {
        MutableTimerState::new(&mut self.txn)
    }

    pub fn message_subscriptions(&self) -> MessageSubscriptionState<'_> {
        MessageSubscriptionState::new(&self.txn)
    }

    pub fn message_subscriptions_mut(&mut self) -> MutableMessageSubscriptionState<'_, 's> {
        MutableMessageSubscriptionState::new(&mut self.txn)
    }

    pub fn process_message_subscriptions(&self) -> ProcessMessageSubscriptionState<'_> {
        ProcessMessageSubscriptionState::new(&self.txn)
    }

    pub fn process_message_subscriptions_mut(
        &mut self,
    ) -> MutableProcessMessageSubscriptionState<'_, 's> {
        MutableProcessMessageSubscriptionState::new(&mut self.txn)
    }

    pub fn message_start_subscriptions(&self) -> MessageStartSubscriptionState<'_> {
        MessageStartSubscriptionState::new(&self.txn)
    }

    pub fn message_start_subscriptions_mut(
        &mut self,
    ) -> MutableMessageStartSubscriptionState<'_, 's> {
        MutableMessageStartSubscriptionState::new(&mut self.txn)
    }

    pub fn signal_subscriptions(&self) -> SignalSubscriptionState<'_> {
        SignalSubscriptionState::new(&self.txn)
    }

    pub fn signal_subscriptions_mut(&mut self) -> MutableSignalSubscriptionState<'_, 's> {
        MutableSignalSubscriptionState::new(&mut self.txn)
    }

    /// The batch's writes, to be stored once the batch is in the log.
    pub fn into_writes(mut self) -> WriteBatch {
        self.instances.flush(&mut self.txn);
        self.txn.take_batch()
    }
}

/// Entries of an index of requests waiting for another partition's confirmation, keyed by
/// (element instance key, message name) with the time of the request as value: those made at
/// or before `before`.
pub(crate) fn pending_since(
    txn: &Transaction<'_>,
    cf: beeline_state::ColumnFamily,
    before: i64,
) -> beeline_state::Result<Vec<(i64, String)>> {
    let prefix = beeline_state::KeyBuilder::new(cf).build();
    let mut found = Vec::new();
    for entry in txn.scan_queue(&prefix) {
        let (key, value) = entry?;
        let since = read_int(cf, Some(value), i64::from_be_bytes)?;
        if since.is_some_and(|since| since <= before) {
            let mut reader = beeline_state::KeyReader::new(cf, &key)?;
            found.push((reader.i64()?, reader.str()?.to_string()));
        }
    }
    Ok(found)
}

/// A big-endian integer stored in `cf` (read with `from`, such as `i64::from_be_bytes`): a
/// value of another length is damage, never read as absent or as zero.
pub(crate) fn read_int<const N: usize, T>(
    cf: beeline_state::ColumnFamily,
    bytes: Option<Vec<u8>>,
    from: fn([u8; N]) -> T,
) -> beeline_state::Result<Option<T>> {
    bytes
        .map(|bytes| {
            let array: [u8; N] =
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| beeline_state::Error::Decode {
                        cf: cf.name(),
                        reason: format!("an integer of {N} bytes is stored as {}", bytes.len()),
                    })?;
            Ok(from(array))
        })
        .transpose()
}

/// A value stored about one record, with a lifecycle state for most: element instances,
/// jobs, user tasks and message subscriptions. Read only through [`decode_stored`], so every
/// value read from state holds its record and a state this build knows, and its `record()`
/// never stands an empty record in for a missing one.
pub(crate) trait Stored: prost::Message + Default {
    /// What makes the value unreadable as stored (no record, a state no lifecycle has), if
    /// anything: "has no record".
    fn damage(&self) -> Option<String>;
}

/// How errors name a message subscription: by its element instance and message name.
pub(crate) fn subscription_name(element_instance_key: i64, message_name: &str) -> String {
    format!("(element instance {element_instance_key}, message '{message_name}')")
}

/// Decodes a [`Stored`] value of `cf` and checks it; `key` names the entry in errors. Damage
/// is a decoding error naming the family and key, never a default.
pub(crate) fn decode_stored<M: Stored>(
    cf: beeline_state::ColumnFamily,
    key: impl std::fmt::Display,
    bytes: &[u8],
) -> beeline_state::Result<M> {
    let value: M = decode(cf, bytes)?;
    match value.damage() {
        None => Ok(value),
        Some(damage) => Err(beeline_state::Error::Decode {
            cf: cf.name(),
            reason: format!("the value stored for {key} {damage}"),
        }),
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
