use beeline_protocol::Record;
use beeline_protocol::value::ClockRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `CLOCK PINNED`: the partition's time stands at the record's instant.
pub(crate) struct ClockPinnedApplier;

impl EventApplier for ClockPinnedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let time = value_of::<ClockRecord>(event)?.time;
        state.meta_mut().pin_clock(time);
        Ok(())
    }
}
