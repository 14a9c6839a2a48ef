use crate::state::values::SubscriptionLifecycle;
use beeline_protocol::Record;
use beeline_protocol::value::ProcessMessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS_MESSAGE_SUBSCRIPTION CREATED`: the message's partition opened it. Also after a
/// non-interrupting correlation (`CORRELATED`): it stays open for the next message.
pub(crate) struct ProcessMessageSubscriptionCreatedApplier;

impl EventApplier for ProcessMessageSubscriptionCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessMessageSubscriptionRecord>(event)?;
        state.process_message_subscriptions_mut().put(
            event.key,
            record,
            SubscriptionLifecycle::Created,
            event.timestamp,
        );
        Ok(())
    }
}
