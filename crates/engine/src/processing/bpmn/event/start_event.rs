//! Start events (Zeebe's `StartEventProcessor`): where a scope starts. One started by an event
//! (a message, timer or signal start event, or an event sub-process's) has taken the event
//! and completes with its variables.

use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct StartEventProcessor;

impl ElementProcessor for StartEventProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        bpmn.pass_through()?;
        Ok(())
    }
}
