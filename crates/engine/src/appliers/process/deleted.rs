use beeline_protocol::Record;
use beeline_protocol::value::ProcessRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS DELETING`: the definition starts no new instances by its id; the version before
/// it becomes the latest.
pub(crate) struct ProcessDeletingApplier;

impl EventApplier for ProcessDeletingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let process = value_of::<ProcessRecord>(event)?;
        state.processes_mut().start_deleting(process)?;
        Ok(())
    }
}

/// `PROCESS DELETED`: the definition is gone.
pub(crate) struct ProcessDeletedApplier;

impl EventApplier for ProcessDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let process = value_of::<ProcessRecord>(event)?;
        state.processes_mut().remove(process)?;
        Ok(())
    }
}
