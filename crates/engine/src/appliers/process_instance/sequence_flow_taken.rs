use beeline_bpmn::ElementRef;
use beeline_protocol::Record;
use beeline_protocol::value::ProcessInstanceRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::model::{deployed, is_joining};
use crate::processing::value_of;
use crate::state::EngineState;

/// `SEQUENCE_FLOW_TAKEN`: a token is on its way in the flow scope; at a joining gateway it
/// waits, counted per incoming flow.
pub(crate) struct SequenceFlowTakenApplier;

impl EventApplier for SequenceFlowTakenApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessInstanceRecord>(event)?;
        let scope = record.flow_scope_key;
        state
            .element_instances_mut()
            .update(scope, |s| s.active_flows += 1)?;
        let process = deployed(state, record)?;
        if let Some(ElementRef::SequenceFlow(flow)) = process.model.lookup(&record.element_id) {
            let target = process.model[flow].target;
            if is_joining(&process.model, target) {
                let gateway = process.model[target].id.clone();
                state.element_instances_mut().add_taken_flow(
                    scope,
                    &gateway,
                    &record.element_id,
                )?;
            }
        }
        Ok(())
    }
}
