use beeline_protocol::Record;
use beeline_protocol::value::VariableDocumentRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `VARIABLE_DOCUMENT UPDATING`: an update of a user task's variables waits for the task's
/// `updating` listeners (the variables are set when the update ends).
pub(crate) struct VariableDocumentUpdatingApplier;

impl EventApplier for VariableDocumentUpdatingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let update = value_of::<VariableDocumentRecord>(event)?;
        let Some(element) = state.element_instances().get(update.scope_key)? else {
            return Ok(());
        };
        if let Some(mut stored) = state.user_tasks_mut().get(element.user_task_key)? {
            stored.variable_document_key = event.key;
            stored.variable_document = Some(update.clone());
            state.user_tasks_mut().store(element.user_task_key, stored);
        }
        Ok(())
    }
}
