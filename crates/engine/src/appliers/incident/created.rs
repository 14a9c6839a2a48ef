use beeline_protocol::Record;
use beeline_protocol::value::IncidentRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::JobLifecycle;

/// `INCIDENT CREATED`, version 1: the incident is recorded. Every job incident of this version
/// was raised for a job that had already left the activatable state (failed without retries,
/// or an error nobody caught).
pub(crate) struct IncidentCreatedApplier;

impl EventApplier for IncidentCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let incident = value_of::<IncidentRecord>(event)?;
        state.incidents_mut().create(event.key, incident);
        Ok(())
    }
}

/// `INCIDENT CREATED`, version 2: as version 1, and a job incident also takes an activatable
/// job out of activation (a job too large to hand to any worker, Zeebe's
/// `MESSAGE_SIZE_EXCEEDED`): it waits as a failed job until the incident is resolved, which
/// makes it activatable again while it has retries.
pub(crate) struct IncidentCreatedV2Applier;

impl EventApplier for IncidentCreatedV2Applier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let incident = value_of::<IncidentRecord>(event)?;
        state.incidents_mut().create(event.key, incident);
        if incident.job_key > 0
            && let Some(job) = state.jobs().get(incident.job_key)?
            && job.lifecycle()? == JobLifecycle::Activatable
        {
            let mut record = job.record();
            record.recurring_time = -1;
            state
                .jobs_mut()
                .transition(incident.job_key, &record, JobLifecycle::Failed)?;
        }
        Ok(())
    }
}
