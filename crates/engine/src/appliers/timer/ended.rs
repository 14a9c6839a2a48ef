use beeline_protocol::Record;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::state::EngineState;

/// `TIMER TRIGGERED`, `TIMER CANCELED`: the timer is gone (a repeating timer that goes on
/// is a new timer).
pub(crate) struct TimerEndedApplier;

impl EventApplier for TimerEndedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        state.timers_mut().remove(event.key)?;
        Ok(())
    }
}
