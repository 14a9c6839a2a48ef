use beeline_protocol::Record;
use beeline_protocol::value::{DecisionRecord, DecisionRequirementsRecord};

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `DECISION DELETED`: the decision is gone; the version before it becomes the latest.
pub(crate) struct DecisionDeletedApplier;

impl EventApplier for DecisionDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let decision = value_of::<DecisionRecord>(event)?;
        state.decisions_mut().remove_decision(decision)?;
        Ok(())
    }
}

/// `DECISION_REQUIREMENTS DELETED`: the graph is gone (its decisions were deleted before it).
pub(crate) struct DecisionRequirementsDeletedApplier;

impl EventApplier for DecisionRequirementsDeletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let graph = value_of::<DecisionRequirementsRecord>(event)?;
        state.decisions_mut().remove_requirements(graph)?;
        Ok(())
    }
}
