//! End events (Zeebe's `EndEventProcessor`): the end of a path. An error end event throws its
//! error, an escalation or signal end event its event, a message end event its job; a
//! terminate end event ends everything else in its scope.

use beeline_bpmn::{ElementData, EventDefinition, ThrowEvent};
use beeline_protocol::intent::ProcessInstanceIntent as PI;

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::{flow, jobs, throw};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};

pub(crate) struct EndEventProcessor;

impl ElementProcessor for EndEventProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let process = bpmn.process.clone();
        let element = &process.model[bpmn.index];
        if let Some(properties) = element.job_worker() {
            return jobs::activate_job_worker(bpmn, properties);
        }
        let ElementData::EndEvent(ThrowEvent { event }) = &element.data else {
            return Ok(bpmn.pass_through()?);
        };
        match event {
            EventDefinition::Error(definition) => throw::throw_error(bpmn, definition),
            EventDefinition::Escalation(definition) => throw::throw_escalation(bpmn, definition),
            EventDefinition::Signal(definition) => throw::throw_signal(bpmn, &definition.signal),
            _ => Ok(bpmn.pass_through()?),
        }
    }

    fn on_complete(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        if matches!(
            bpmn.element().event_definition(),
            Some(EventDefinition::Terminate)
        ) {
            return Ok(terminate_scope(bpmn)?);
        }
        flow::complete_and_leave(bpmn)
    }
}

/// A terminate end event completes and terminates everything else in its scope (its
/// ELEMENT_COMPLETED interrupts the scope); the scope completes once they are all gone.
fn terminate_scope(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Result<(), ProcessingError> {
    let scope = bpmn.record.flow_scope_key;
    let mut siblings = Vec::new();
    for child in bpmn.ctx.state().element_instances().children(scope)? {
        if child != bpmn.key
            && let Some(sibling) = bpmn.ctx.state().element_instances().get(child)?
        {
            siblings.push(sibling);
        }
    }
    bpmn.write(PI::ElementCompleted)?;
    if siblings.is_empty() {
        flow::after_terminated(bpmn)?;
    }
    for sibling in siblings {
        bpmn.ctx
            .append_command(sibling.key, PI::TerminateElement, sibling.record());
    }
    Ok(())
}
