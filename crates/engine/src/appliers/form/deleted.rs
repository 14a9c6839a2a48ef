use beeline_protocol::Record;
use beeline_protocol::value::FormRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `FORM DELETED`: the form is gone; the version before it becomes the latest.
pub(crate) struct FormDeletedApplier;

impl EventApplier for FormDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let form = value_of::<FormRecord>(event)?;
        state.forms_mut().remove(form)?;
        Ok(())
    }
}
