use beeline_protocol::Record;
use beeline_protocol::value::MessageRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

pub(crate) struct MessagePublishedApplier;

impl EventApplier for MessagePublishedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let message = value_of::<MessageRecord>(event)?;
        state.messages_mut().insert(event.key, message);
        Ok(())
    }
}
