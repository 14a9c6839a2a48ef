use beeline_protocol::Record;
use beeline_protocol::value::MessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MESSAGE_SUBSCRIPTION CORRELATING`: a message is on its way to the instance; it counts as
/// correlated to the process, and the subscription takes no other until this one is settled.
pub(crate) struct MessageSubscriptionCorrelatingApplier;

impl EventApplier for MessageSubscriptionCorrelatingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageSubscriptionRecord>(event)?;
        state
            .message_subscriptions_mut()
            .correlating(record, event.timestamp)?;
        state
            .messages_mut()
            .put_correlation(record.message_key, &record.bpmn_process_id);
        Ok(())
    }
}
