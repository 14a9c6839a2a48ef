use crate::state::values::SubscriptionLifecycle;
use beeline_protocol::Record;
use beeline_protocol::value::ProcessMessageSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS_MESSAGE_SUBSCRIPTION CORRELATED`: a message triggered the element. An
/// interrupting subscription is done; another stays open.
pub(crate) struct ProcessMessageSubscriptionCorrelatedApplier;

impl EventApplier for ProcessMessageSubscriptionCorrelatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessMessageSubscriptionRecord>(event)?;
        if record.interrupting {
            state
                .process_message_subscriptions_mut()
                .remove(record.element_instance_key, &record.message_name);
        } else {
            state.process_message_subscriptions_mut().put(
                event.key,
                record,
                SubscriptionLifecycle::Created,
                event.timestamp,
            );
        }
        Ok(())
    }
}
