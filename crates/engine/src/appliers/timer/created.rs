use beeline_protocol::Record;
use beeline_protocol::value::TimerRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `TIMER CREATED`: the timer waits for its due date.
pub(crate) struct TimerCreatedApplier;

impl EventApplier for TimerCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<TimerRecord>(event)?;
        state.timers_mut().insert(event.key, record);
        Ok(())
    }
}
