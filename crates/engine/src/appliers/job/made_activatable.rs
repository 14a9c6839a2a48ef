use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::JobLifecycle;

/// `JOB TIMED_OUT`, `RECURRED_AFTER_BACKOFF`, `YIELDED`: activatable again.
pub(crate) struct JobMadeActivatableApplier;

impl EventApplier for JobMadeActivatableApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let mut stored = value_of::<JobRecord>(event)?.clone();
        stored.variables.clear();
        stored.deadline = -1;
        stored.recurring_time = -1;
        state
            .jobs_mut()
            .transition(event.key, &stored, JobLifecycle::Activatable)?;
        Ok(())
    }
}
