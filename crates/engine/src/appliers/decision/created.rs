use beeline_protocol::Record;
use beeline_protocol::value::{DecisionRecord, DecisionRequirementsRecord};

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `DECISION_REQUIREMENTS CREATED`: a new version of a decision requirements graph.
pub(crate) struct DecisionRequirementsCreatedApplier;

impl EventApplier for DecisionRequirementsCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let requirements = value_of::<DecisionRequirementsRecord>(event)?;
        state.decisions_mut().insert_requirements(requirements)?;
        Ok(())
    }
}

/// `DECISION CREATED`: a new version of a decision.
pub(crate) struct DecisionCreatedApplier;

impl EventApplier for DecisionCreatedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let decision = value_of::<DecisionRecord>(event)?;
        state.decisions_mut().insert_decision(decision)?;
        Ok(())
    }
}
