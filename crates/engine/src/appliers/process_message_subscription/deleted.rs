use beeline_protocol::Record;
use beeline_protocol::value::ProcessMessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS_MESSAGE_SUBSCRIPTION DELETED`: the message's partition closed it.
pub(crate) struct ProcessMessageSubscriptionDeletedApplier;

impl EventApplier for ProcessMessageSubscriptionDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessMessageSubscriptionRecord>(event)?;
        state
            .process_message_subscriptions_mut()
            .remove(record.element_instance_key, &record.message_name);
        Ok(())
    }
}
