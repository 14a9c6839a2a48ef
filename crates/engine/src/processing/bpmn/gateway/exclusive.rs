//! The exclusive gateway (Zeebe's `ExclusiveGatewayProcessor`): takes the first outgoing flow
//! whose condition holds, else the default flow; with neither, an incident.

use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct ExclusiveGatewayProcessor;

impl ElementProcessor for ExclusiveGatewayProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let outgoing = bpmn.element().outgoing.clone();
        let default = super::gateway(bpmn).default_flow;
        let chosen = if outgoing.len() == 1 && bpmn.process.model[outgoing[0]].condition.is_none() {
            Some(outgoing[0])
        } else {
            let mut chosen = None;
            for &flow in &outgoing {
                if Some(flow) != default && super::holds(bpmn, flow)? {
                    chosen = Some(flow);
                    break;
                }
            }
            chosen.or(default)
        };
        let Some(flow) = chosen else {
            return Err(super::no_flow_taken());
        };
        super::pass_through(bpmn, &[flow])?;
        Ok(())
    }
}
