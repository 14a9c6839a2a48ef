use beeline_protocol::Record;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::state::EngineState;

/// `CLOCK RESETTED`: the partition's time is the system clock's again.
pub(crate) struct ClockResettedApplier;

impl EventApplier for ClockResettedApplier {
    fn apply(&self, _event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        state.meta_mut().reset_clock();
        Ok(())
    }
}
