use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::JobLifecycle;

/// `JOB FAILED`: with retries and no back-off, activatable again; with a back-off, waiting
/// for it; without retries, failed until its incident is resolved.
pub(crate) struct JobFailedApplier;

impl EventApplier for JobFailedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let job = value_of::<JobRecord>(event)?;
        let lifecycle = if job.retries > 0 && job.recurring_time <= 0 {
            JobLifecycle::Activatable
        } else {
            JobLifecycle::Failed
        };
        let mut stored = job.clone();
        stored.variables.clear();
        state.jobs_mut().transition(event.key, &stored, lifecycle)?;
        Ok(())
    }
}
