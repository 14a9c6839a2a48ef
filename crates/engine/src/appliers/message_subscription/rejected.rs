use beeline_protocol::Record;
use beeline_protocol::value::MessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MESSAGE_SUBSCRIPTION REJECTED`: the instance could not take the message; it is free for
/// another instance of the process.
pub(crate) struct MessageSubscriptionRejectedApplier;

impl EventApplier for MessageSubscriptionRejectedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageSubscriptionRecord>(event)?;
        state
            .messages_mut()
            .remove_correlation(record.message_key, &record.bpmn_process_id);
        // The subscription that refused takes no other message: its element instance is
        // leaving, and closes it soon.
        state.message_subscriptions_mut().stop_retrying(record);
        Ok(())
    }
}
