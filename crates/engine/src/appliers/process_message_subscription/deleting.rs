use crate::state::values::SubscriptionLifecycle;
use beeline_protocol::Record;
use beeline_protocol::value::ProcessMessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS_MESSAGE_SUBSCRIPTION DELETING`: asked the message's partition to close it.
pub(crate) struct ProcessMessageSubscriptionDeletingApplier;

impl EventApplier for ProcessMessageSubscriptionDeletingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessMessageSubscriptionRecord>(event)?;
        state.process_message_subscriptions_mut().put(
            event.key,
            record,
            SubscriptionLifecycle::Deleting,
            event.timestamp,
        );
        Ok(())
    }
}
