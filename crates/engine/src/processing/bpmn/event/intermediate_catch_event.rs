//! Intermediate catch events (Zeebe's `IntermediateCatchEventProcessor`): a timer, message or
//! signal event waits for its event and completes with its variables; after an event-based
//! gateway it starts with the event already taken. A link catch event passes through.

use beeline_protocol::intent::ProcessInstanceIntent as PI;

use crate::processing::bpmn::behavior::subscriptions;
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct IntermediateCatchEventProcessor;

impl ElementProcessor for IntermediateCatchEventProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        if subscriptions::awaited(bpmn.element()).is_some() && !bpmn.triggered()? {
            subscriptions::open(bpmn)?;
            // Completed by the event (PROCESS_EVENT TRIGGERING and COMPLETE_ELEMENT).
            bpmn.write(PI::ElementActivated)?;
        } else {
            bpmn.pass_through()?;
        }
        Ok(())
    }
}
