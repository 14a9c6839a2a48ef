use beeline_protocol::Record;
use beeline_protocol::value::MessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MESSAGE_SUBSCRIPTION DELETED`: the element instance stopped waiting.
pub(crate) struct MessageSubscriptionDeletedApplier;

impl EventApplier for MessageSubscriptionDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageSubscriptionRecord>(event)?;
        state
            .message_subscriptions_mut()
            .remove(record.element_instance_key, &record.message_name)?;
        Ok(())
    }
}
