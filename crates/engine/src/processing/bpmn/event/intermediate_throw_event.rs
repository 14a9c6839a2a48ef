//! Intermediate throw events (Zeebe's `IntermediateThrowEventProcessor`): an escalation or a
//! signal is thrown, a message through its job worker; a link throw event continues at its
//! catch event, as if a flow led there; a none event passes through.

use beeline_bpmn::{ElementData, EventDefinition, ThrowEvent};
use beeline_protocol::intent::ProcessInstanceIntent as PI;

use crate::processing::bpmn::behavior::{flow, jobs, throw};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct IntermediateThrowEventProcessor;

impl ElementProcessor for IntermediateThrowEventProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let process = bpmn.process.clone();
        let element = &process.model[bpmn.index];
        if let Some(properties) = element.job_worker() {
            return jobs::activate_job_worker(bpmn, properties);
        }
        match &element.data {
            ElementData::IntermediateThrowEvent(ThrowEvent {
                event: EventDefinition::Escalation(definition),
            }) => throw::throw_escalation(bpmn, definition),
            ElementData::IntermediateThrowEvent(ThrowEvent {
                event: EventDefinition::Signal(definition),
            }) => throw::throw_signal(bpmn, &definition.signal),
            _ => {
                bpmn.pass_through()?;
                Ok(())
            }
        }
    }

    fn on_complete(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        if let Some(EventDefinition::Link(link)) = bpmn.element().event_definition()
            && let Some(catch) = link.catch_event
        {
            bpmn.write(PI::ElementCompleted)?;
            return Ok(bpmn.activate_element(catch, bpmn.record.flow_scope_key)?);
        }
        flow::complete_and_leave(bpmn)
    }
}
