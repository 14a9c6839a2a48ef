use beeline_protocol::Record;
use beeline_protocol::value::SignalSubscriptionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `SIGNAL_SUBSCRIPTION CREATED`: broadcasts of its signal trigger it.
pub(crate) struct SignalSubscriptionCreatedApplier;

impl EventApplier for SignalSubscriptionCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<SignalSubscriptionRecord>(event)?;
        state.signal_subscriptions_mut().insert(event.key, record);
        Ok(())
    }
}
