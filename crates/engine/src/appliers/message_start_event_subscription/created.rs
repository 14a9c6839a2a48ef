use beeline_protocol::Record;
use beeline_protocol::value::MessageStartEventSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MESSAGE_START_EVENT_SUBSCRIPTION CREATED`: messages with its name start instances.
pub(crate) struct MessageStartEventSubscriptionCreatedApplier;

impl EventApplier for MessageStartEventSubscriptionCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageStartEventSubscriptionRecord>(event)?;
        state
            .message_start_subscriptions_mut()
            .insert(event.key, record);
        Ok(())
    }
}
