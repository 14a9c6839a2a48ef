use beeline_protocol::Record;
use beeline_protocol::intent::VariableIntent;
use beeline_protocol::value::VariableRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `VARIABLE CREATED`, `VARIABLE UPDATED`.
pub(crate) struct VariableSetApplier;

impl EventApplier for VariableSetApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let variable = value_of::<VariableRecord>(event)?;
        if event.intent == VariableIntent::Created.into() {
            state.variables_mut().create(
                variable.scope_key,
                &variable.name,
                event.key,
                &variable.value,
            );
        } else {
            state.variables_mut().update(
                variable.scope_key,
                &variable.name,
                event.key,
                &variable.value,
            );
        }
        Ok(())
    }
}
