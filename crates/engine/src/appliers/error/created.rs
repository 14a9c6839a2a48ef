use beeline_protocol::Record;
use beeline_protocol::value::ErrorRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `ERROR CREATED`: bans the instance whose command failed unexpectedly.
pub(crate) struct ErrorCreatedApplier;

impl EventApplier for ErrorCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let error = value_of::<ErrorRecord>(event)?;
        if error.process_instance_key > 0 {
            state.banned_instances_mut().ban(error.process_instance_key);
        }
        Ok(())
    }
}
