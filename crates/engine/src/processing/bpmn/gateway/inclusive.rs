//! The inclusive gateway (Zeebe's `InclusiveGatewayProcessor`): takes every outgoing flow whose
//! condition holds, else the default flow; with neither, an incident. As a join it waits for a
//! token on every incoming flow that can still get one (`behavior/flow.rs`).

use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct InclusiveGatewayProcessor;

impl ElementProcessor for InclusiveGatewayProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let outgoing = bpmn.element().outgoing.clone();
        let default = super::gateway(bpmn).default_flow;
        let mut taken = Vec::new();
        for &flow in &outgoing {
            if Some(flow) != default && super::holds(bpmn, flow)? {
                taken.push(flow);
            }
        }
        if taken.is_empty() {
            match default {
                Some(flow) => taken.push(flow),
                None if outgoing.is_empty() => {}
                None => return Err(super::no_flow_taken()),
            }
        }
        super::pass_through(bpmn, &taken)?;
        Ok(())
    }
}
