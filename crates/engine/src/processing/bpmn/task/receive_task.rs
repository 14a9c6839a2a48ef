//! The receive task (Zeebe's `ReceiveTaskProcessor`): waits for its message, and completes
//! with the message's variables. After an event-based gateway it starts with the message
//! already taken, and completes at once.

use beeline_protocol::intent::ProcessInstanceIntent as PI;

use crate::processing::bpmn::behavior::subscriptions;
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct ReceiveTaskProcessor;

impl ElementProcessor for ReceiveTaskProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        if bpmn.triggered()? {
            bpmn.pass_through()?;
        } else {
            subscriptions::open(bpmn)?;
            // Completed by the message (PROCESS_EVENT TRIGGERING and COMPLETE_ELEMENT).
            bpmn.write(PI::ElementActivated)?;
        }
        Ok(())
    }
}
