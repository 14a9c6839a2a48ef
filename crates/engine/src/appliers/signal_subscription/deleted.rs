use beeline_protocol::Record;
use beeline_protocol::value::SignalSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `SIGNAL_SUBSCRIPTION DELETED`: the element instance stopped waiting, or a new process
/// version replaced the start event.
pub(crate) struct SignalSubscriptionDeletedApplier;

impl EventApplier for SignalSubscriptionDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<SignalSubscriptionRecord>(event)?;
        state.signal_subscriptions_mut().remove(event.key, record);
        Ok(())
    }
}
