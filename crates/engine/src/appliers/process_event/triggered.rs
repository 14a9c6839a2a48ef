use beeline_protocol::Record;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::state::EngineState;

/// `PROCESS_EVENT TRIGGERED`: the catching instance took the event; its variables are what
/// the instance completes with.
pub(crate) struct ProcessEventTriggeredApplier;

impl EventApplier for ProcessEventTriggeredApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        if let Some(trigger) = state.event_triggers_mut().remove(event.key)? {
            let variables = trigger.variables;
            state
                .element_instances_mut()
                .update(event.key, |e| e.completion_variables = Some(variables))?;
        }
        Ok(())
    }
}
