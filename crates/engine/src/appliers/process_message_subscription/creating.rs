use crate::state::values::SubscriptionLifecycle;
use beeline_protocol::Record;
use beeline_protocol::value::ProcessMessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS_MESSAGE_SUBSCRIPTION CREATING`: asked the message's partition to open it.
pub(crate) struct ProcessMessageSubscriptionCreatingApplier;

impl EventApplier for ProcessMessageSubscriptionCreatingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessMessageSubscriptionRecord>(event)?;
        state.process_message_subscriptions_mut().put(
            event.key,
            record,
            SubscriptionLifecycle::Creating,
            event.timestamp,
        );
        Ok(())
    }
}
