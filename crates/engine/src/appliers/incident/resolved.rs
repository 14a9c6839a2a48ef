use beeline_protocol::Record;
use beeline_protocol::value::IncidentRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::JobLifecycle;

/// `INCIDENT RESOLVED`: the incident is gone; a job it held back with retries left is
/// activatable again. An element's incident retries the step that failed, with its
/// execution or task listeners from the first again.
pub(crate) struct IncidentResolvedApplier;

impl EventApplier for IncidentResolvedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let incident = value_of::<IncidentRecord>(event)?;
        state.incidents_mut().remove(event.key)?;
        if incident.job_key <= 0 {
            state
                .element_instances_mut()
                .update(incident.element_instance_key, |e| {
                    e.execution_listener_index = 0;
                    e.task_listener_index = 0;
                })?;
        }
        if incident.job_key > 0
            && let Some(job) = state.jobs().get(incident.job_key)?
            && matches!(
                job.lifecycle()?,
                JobLifecycle::Failed | JobLifecycle::ErrorThrown
            )
            && job.record().retries > 0
        {
            let mut record = job.record();
            record.recurring_time = -1;
            record.deadline = -1;
            state
                .jobs_mut()
                .transition(incident.job_key, &record, JobLifecycle::Activatable)?;
        }
        Ok(())
    }
}
