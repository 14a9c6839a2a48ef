use beeline_protocol::Record;
use beeline_protocol::value::JobBatchRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::JobLifecycle;

/// `JOB_BATCH ACTIVATED`: each job belongs to the worker until its deadline.
pub(crate) struct JobBatchActivatedApplier;

impl EventApplier for JobBatchActivatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let batch = value_of::<JobBatchRecord>(event)?;
        for (key, job) in batch.job_keys.iter().zip(&batch.jobs) {
            let mut stored = job.clone();
            stored.variables.clear();
            state
                .jobs_mut()
                .transition(*key, &stored, JobLifecycle::Activated)?;
        }
        Ok(())
    }
}
