use beeline_protocol::Record;
use beeline_protocol::value::FormRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `FORM CREATED`: a new version of a form, the latest of its id unless a newer one is there.
pub(crate) struct FormCreatedApplier;

impl EventApplier for FormCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let form = value_of::<FormRecord>(event)?;
        state.forms_mut().insert(form)?;
        Ok(())
    }
}
