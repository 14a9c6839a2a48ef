use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `JOB TIMEOUT_UPDATED`: the activated job has a new deadline.
pub(crate) struct JobTimeoutUpdatedApplier;

impl EventApplier for JobTimeoutUpdatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let deadline = value_of::<JobRecord>(event)?.deadline;
        state
            .jobs_mut()
            .update(event.key, |job| job.deadline = deadline)?;
        Ok(())
    }
}
