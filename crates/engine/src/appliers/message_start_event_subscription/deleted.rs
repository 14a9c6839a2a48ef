use beeline_protocol::Record;
use beeline_protocol::value::MessageStartEventSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MESSAGE_START_EVENT_SUBSCRIPTION DELETED`: a new process version replaced it.
pub(crate) struct MessageStartEventSubscriptionDeletedApplier;

impl EventApplier for MessageStartEventSubscriptionDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageStartEventSubscriptionRecord>(event)?;
        state.message_start_subscriptions_mut().remove(record);
        Ok(())
    }
}
