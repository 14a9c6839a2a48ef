//! The parallel gateway (Zeebe's `ParallelGatewayProcessor`): takes every outgoing flow; as a
//! join it waits for a token on every incoming flow (`behavior/flow.rs`).

use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct ParallelGatewayProcessor;

impl ElementProcessor for ParallelGatewayProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let outgoing = bpmn.element().outgoing.clone();
        super::pass_through(bpmn, &outgoing)?;
        Ok(())
    }
}
