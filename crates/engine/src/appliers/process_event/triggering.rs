use beeline_protocol::Record;
use beeline_protocol::value::ProcessEventRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `PROCESS_EVENT TRIGGERING`: an event waits for the instance (key of the record) that will
/// catch it. An interrupting event sub-process's event closes its scope to new tokens.
pub(crate) struct ProcessEventTriggeringApplier;

impl EventApplier for ProcessEventTriggeringApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let trigger = value_of::<ProcessEventRecord>(event)?;
        state.event_triggers_mut().put(event.key, trigger);
        if trigger.interrupting && trigger.scope_key != event.key {
            // The scope (an activity with a boundary event, a scope with an event
            // sub-process) takes no new tokens while what is in it is terminated.
            state.element_instances_mut().interrupt(trigger.scope_key)?;
        }
        Ok(())
    }
}
