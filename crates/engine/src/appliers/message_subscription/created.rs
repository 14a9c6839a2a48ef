use beeline_protocol::Record;
use beeline_protocol::value::MessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MESSAGE_SUBSCRIPTION CREATED`: published messages can correlate to it.
pub(crate) struct MessageSubscriptionCreatedApplier;

impl EventApplier for MessageSubscriptionCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageSubscriptionRecord>(event)?;
        state.message_subscriptions_mut().insert(event.key, record);
        Ok(())
    }
}
