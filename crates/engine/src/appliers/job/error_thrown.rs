use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::JobLifecycle;

/// `JOB ERROR_THROWN`: uncaught so far, the job waits for its incident to be resolved.
pub(crate) struct JobErrorThrownApplier;

impl EventApplier for JobErrorThrownApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let mut stored = value_of::<JobRecord>(event)?.clone();
        stored.variables.clear();
        state
            .jobs_mut()
            .transition(event.key, &stored, JobLifecycle::ErrorThrown)?;
        Ok(())
    }
}
