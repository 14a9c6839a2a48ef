use beeline_protocol::Record;
use beeline_protocol::value::MultiInstanceRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `MULTI_INSTANCE INPUT_COLLECTION_EVALUATED`: the body (the event's key) keeps its input
/// collection, an item per entry, until it ends.
pub(crate) struct InputCollectionEvaluatedApplier;

impl EventApplier for InputCollectionEvaluatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let evaluated = value_of::<MultiInstanceRecord>(event)?;
        let size = i32::try_from(evaluated.input_collection.len()).map_err(|_| {
            ProcessingError::Internal(format!(
                "the input collection of multi-instance body {} has more than {} items",
                event.key,
                i32::MAX
            ))
        })?;
        state
            .multi_instance_mut()
            .set_input_collection(event.key, &evaluated.input_collection);
        state
            .element_instances_mut()
            .update(event.key, |body| body.input_collection_size = size)?;
        Ok(())
    }
}
