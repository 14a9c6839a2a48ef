//! The embedded sub-process (Zeebe's `SubProcessProcessor`): a scope that starts at its none
//! start event and completes when nothing is left in it.

use beeline_protocol::intent::ProcessInstanceIntent as PI;

use crate::processing::bpmn::behavior::subscriptions;
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct SubProcessProcessor;

impl ElementProcessor for SubProcessProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        subscriptions::open(bpmn)?;
        bpmn.write(PI::ElementActivated)?;
        super::start_at_none_start_event(bpmn)?;
        Ok(())
    }
}
