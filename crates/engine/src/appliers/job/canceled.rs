use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `JOB CANCELED`: its element was terminated.
pub(crate) struct JobCanceledApplier;

impl EventApplier for JobCanceledApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let job = value_of::<JobRecord>(event)?;
        state.jobs_mut().remove(event.key)?;
        state
            .element_instances_mut()
            .update(job.element_instance_key, |e| e.job_key = 0)?;
        Ok(())
    }
}
