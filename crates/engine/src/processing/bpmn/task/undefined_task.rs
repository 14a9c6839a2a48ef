//! Undefined (`bpmn:task`) and manual tasks (Zeebe's `UndefinedTaskProcessor`): nothing to do;
//! they pass through, unless a boundary event catches something first.

use crate::processing::bpmn::behavior::subscriptions;
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct UndefinedTaskProcessor;

impl ElementProcessor for UndefinedTaskProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        subscriptions::open(bpmn)?;
        bpmn.pass_through()?;
        Ok(())
    }
}
