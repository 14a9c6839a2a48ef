//! The event-based gateway (Zeebe's `EventBasedGatewayProcessor`): waits for the first of the
//! events after it; that event's trigger completes the gateway, which takes the flow to the
//! event, and the event starts with the trigger already taken.

use beeline_protocol::intent::ProcessInstanceIntent as PI;

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::{flow, subscriptions};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Failure, Step};

pub(crate) struct EventBasedGatewayProcessor;

impl ElementProcessor for EventBasedGatewayProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        subscriptions::open(bpmn)?;
        // Completed by the first event (PROCESS_EVENT TRIGGERING and COMPLETE_ELEMENT).
        bpmn.write(PI::ElementActivated)?;
        Ok(())
    }

    /// The flow to the event that came is taken, and the event starts under the trigger's key.
    fn on_complete(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        bpmn.write(PI::ElementCompleted)?;
        let Some((key, event)) = bpmn
            .ctx
            .state()
            .event_triggers()
            .of_scope(bpmn.key)?
            .into_iter()
            .next()
        else {
            return Err(Failure::Fatal(ProcessingError::Internal(format!(
                "event-based gateway '{}' completed without an event",
                bpmn.record.element_id
            ))));
        };
        let model = &bpmn.process.model;
        let Some(flow) = bpmn
            .element()
            .outgoing
            .iter()
            .copied()
            .find(|&f| model[model[f].target].id == event.target_element_id)
        else {
            return Err(Failure::Fatal(ProcessingError::Internal(format!(
                "event-based gateway '{}' has no flow to '{}'",
                bpmn.record.element_id, event.target_element_id
            ))));
        };
        flow::take_to(bpmn, flow, key)?;
        Ok(())
    }
}
