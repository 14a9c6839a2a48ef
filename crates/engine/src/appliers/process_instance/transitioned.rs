use beeline_protocol::Record;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::state::EngineState;

/// `ELEMENT_ACTIVATED`, `ELEMENT_COMPLETING`, `ELEMENT_TERMINATING`: the instance moves on
/// (and counts the listeners of its new phase from the first).
pub(crate) struct ElementTransitionedApplier;

impl EventApplier for ElementTransitionedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let intent = u32::from(event.intent.value());
        state
            .element_instances_mut()
            .update(event.key, |instance| {
                instance.state = intent;
                instance.execution_listener_index = 0;
            })?;
        Ok(())
    }
}
