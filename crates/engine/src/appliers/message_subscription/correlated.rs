use beeline_protocol::Record;
use beeline_protocol::value::MessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MESSAGE_SUBSCRIPTION CORRELATED`: the instance took the message. An interrupting
/// subscription is done; another one takes the next message.
pub(crate) struct MessageSubscriptionCorrelatedApplier;

impl EventApplier for MessageSubscriptionCorrelatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<MessageSubscriptionRecord>(event)?;
        if record.interrupting {
            state
                .message_subscriptions_mut()
                .remove(record.element_instance_key, &record.message_name)?;
        } else {
            state.message_subscriptions_mut().correlated(record)?;
        }
        Ok(())
    }
}
