use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `JOB CREATED`: activatable, and the element waits for it (a listener's job counts as one
/// more listener of its phase run).
pub(crate) struct JobCreatedApplier;

impl EventApplier for JobCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let job = value_of::<JobRecord>(event)?;
        state.jobs_mut().create(event.key, job);
        state
            .element_instances_mut()
            .update(job.element_instance_key, |e| {
                e.job_key = event.key;
                match job.job_kind.as_str() {
                    "EXECUTION_LISTENER" => e.execution_listener_index += 1,
                    "TASK_LISTENER" => e.task_listener_index += 1,
                    _ => {}
                }
            })?;
        Ok(())
    }
}
