use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `JOB RETRIES_UPDATED`.
pub(crate) struct JobRetriesUpdatedApplier;

impl EventApplier for JobRetriesUpdatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let retries = value_of::<JobRecord>(event)?.retries;
        state
            .jobs_mut()
            .update(event.key, |job| job.retries = retries)?;
        Ok(())
    }
}
