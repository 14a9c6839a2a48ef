use beeline_protocol::Record;
use beeline_protocol::value::ProcessRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS CREATED`: a new version of a process definition.
pub(crate) struct ProcessCreatedApplier;

impl EventApplier for ProcessCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let process = value_of::<ProcessRecord>(event)?;
        state.processes_mut().insert(process)?;
        Ok(())
    }
}
