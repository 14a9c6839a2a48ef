use beeline_protocol::Record;
use beeline_protocol::value::IncidentRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `INCIDENT CREATED`.
pub(crate) struct IncidentCreatedApplier;

impl EventApplier for IncidentCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let incident = value_of::<IncidentRecord>(event)?;
        state.incidents_mut().create(event.key, incident);
        Ok(())
    }
}
