//! Boundary events (Zeebe's `BoundaryEventProcessor`): started by the event they caught on
//! their activity (an interrupting one once the activity is terminated); they complete with
//! the event's variables and leave on their outgoing flows.

use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct BoundaryEventProcessor;

impl ElementProcessor for BoundaryEventProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        bpmn.pass_through()?;
        Ok(())
    }
}
