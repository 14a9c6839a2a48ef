use beeline_protocol::Record;
use beeline_protocol::value::JobRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `JOB COMPLETED`: the job is gone; its variables wait on the element for its completion
/// (an execution listener's, for the listener's completion to be processed).
pub(crate) struct JobCompletedApplier;

impl EventApplier for JobCompletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let job = value_of::<JobRecord>(event)?;
        state.jobs_mut().remove(event.key)?;
        let variables = job.variables.clone();
        state
            .element_instances_mut()
            .update(job.element_instance_key, |e| {
                e.job_key = 0;
                match job.job_kind.as_str() {
                    "EXECUTION_LISTENER" => e.listener_variables = Some(variables),
                    // A task listener's job has no variables; its result goes to the task.
                    "TASK_LISTENER" => {}
                    _ => e.completion_variables = Some(variables),
                }
            })?;
        Ok(())
    }
}
