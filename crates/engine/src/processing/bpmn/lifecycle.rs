//! What every element's lifecycle shares, around its kind's [`ElementProcessor`].

use beeline_bpmn::{ElementData, ExecutionListenerEventType as Listening};
use beeline_protocol::intent::{IncidentIntent, ProcessEventIntent, ProcessInstanceIntent as PI};

use super::behavior::variables::{self, Document};
use super::behavior::{events, jobs, listeners, subscriptions};
use super::{BpmnElementContext, ElementProcessor, Step, container_of};
use crate::error::ProcessingError;
use crate::model::{InstanceRole, can_be_triggered};
use crate::state::values::{ElementInstance, ElementLifecycle};

/// `ACTIVATE_ELEMENT`: ELEMENT_ACTIVATING, the input mappings, then what the kind does.
pub(super) fn activate(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    processor: &dyn ElementProcessor,
) -> Result<(), ProcessingError> {
    match bpmn.instance()? {
        None => {
            if !flow_scope_accepts_children(bpmn)? {
                // The scope ended (a terminate end event) while this token was on its way.
                return Ok(());
            }
            bpmn.write(PI::ElementActivating)?;
            take_trigger(bpmn)?;
        }
        // Resolving an incident sends the command again: continue after ELEMENT_ACTIVATING
        // (unless a start listener's job is under way).
        Some(instance) if instance.is(ElementLifecycle::Activating) && instance.job_key <= 0 => {}
        Some(_) => {
            bpmn.reject_state("activate");
            return Ok(());
        }
    }
    let step = activating(bpmn, processor);
    bpmn.settle(step)
}

fn activating(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    processor: &dyn ElementProcessor,
) -> Step<()> {
    if bpmn.role == InstanceRole::MultiInstanceInner {
        // Its body gives it its item and loop counter.
        let body = bpmn
            .ctx
            .state()
            .element_instances()
            .get(bpmn.record.flow_scope_key)?;
        if let Some(body) = body {
            container_of(bpmn, &body)?.on_child_activating(bpmn, &body)?;
        }
    }
    let element = bpmn.element();
    if bpmn.role.runs_element() && element.is_activity() && !element.io_mapping.inputs.is_empty() {
        variables::apply_input_mappings(bpmn)?;
    }
    if listeners::run_next(bpmn, Listening::Start, 0)? {
        return Ok(());
    }
    processor.on_activate(bpmn)
}

/// Whether the flow scope is active and can take a new child.
fn flow_scope_accepts_children(
    bpmn: &BpmnElementContext<'_, '_, '_>,
) -> Result<bool, ProcessingError> {
    let scope = bpmn.record.flow_scope_key;
    if scope <= 0 {
        return Ok(true);
    }
    let Some(instance) = bpmn.ctx.state().element_instances().get(scope)? else {
        return Ok(false);
    };
    if !instance.is(ElementLifecycle::Activated) {
        return Ok(false);
    }
    if !instance.interrupted {
        return Ok(true);
    }
    // An interrupted scope only takes the event sub-process that interrupted it.
    if matches!(bpmn.element().data, ElementData::EventSubProcess) {
        let start = &bpmn.process.model[events::start_of(&bpmn.process.model, bpmn.index)];
        return Ok(bpmn
            .ctx
            .state()
            .event_triggers()
            .of_scope(scope)?
            .iter()
            .any(|(_, event)| event.target_element_id == start.id));
    }
    Ok(false)
}

/// Takes the event this instance catches, if one waits for it (PROCESS_EVENT TRIGGERED): its
/// variables become what the instance completes with.
fn take_trigger(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Result<(), ProcessingError> {
    if !can_be_triggered(bpmn.element()) {
        return Ok(());
    }
    if let Some(event) = bpmn.ctx.state().event_triggers().get(bpmn.key)? {
        bpmn.ctx
            .append_event(bpmn.key, ProcessEventIntent::Triggered, event)?;
    }
    Ok(())
}

/// `COMPLETE_ELEMENT`: ELEMENT_COMPLETING, the output mappings, then ELEMENT_COMPLETED and
/// what follows, as the kind decides.
pub(super) fn complete(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    processor: &dyn ElementProcessor,
) -> Result<(), ProcessingError> {
    if bpmn
        .instance()?
        .is_some_and(|i| i.is(ElementLifecycle::Activated))
    {
        take_trigger(bpmn)?;
    }
    let Some(instance) = bpmn.instance()? else {
        // Gone already (terminated meanwhile): nothing to complete.
        return Ok(());
    };
    let step = completing(bpmn, processor, &instance);
    bpmn.settle(step)
}

fn completing(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    processor: &dyn ElementProcessor,
    instance: &ElementInstance,
) -> Step<()> {
    let mut completion = instance
        .completion_variables
        .as_ref()
        .map(|bytes| {
            // Checked when the job was completed: what does not read now is damage.
            Document::parse(bytes).map_err(|reason| {
                ProcessingError::Internal(format!(
                    "the completion variables stored for element instance {} do not read: \
                     {reason}",
                    instance.key
                ))
            })
        })
        .transpose()?;
    if instance.is(ElementLifecycle::Activated) {
        if let Some(result) = processor.completion_result(bpmn, false)? {
            completion = Some(result);
        }
        let process = bpmn.process.clone();
        subscriptions::close_all(bpmn.ctx, &process, bpmn.index, bpmn.role, bpmn.key)?;
        bpmn.write(PI::ElementCompleting)?;
    } else if instance.is(ElementLifecycle::Completing) && instance.job_key <= 0 {
        if let Some(result) = processor.completion_result(bpmn, true)? {
            completion = Some(result);
        }
    } else {
        bpmn.reject_state("complete");
        return Ok(());
    }
    if bpmn.role.runs_element() {
        variables::apply_output_mappings(bpmn, completion.as_ref())?;
    }
    if listeners::run_next(bpmn, Listening::End, 0)? {
        return Ok(());
    }
    processor.on_complete(bpmn)
}

/// `COMPLETE_EXECUTION_LISTENER`: a listener's job completed. Its variables are taken, and
/// the next listener of the phase runs, or the phase goes on: an ELEMENT_ACTIVATING instance
/// does what its kind does, an ELEMENT_COMPLETING one completes.
pub(super) fn listener_completed(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    processor: &dyn ElementProcessor,
) -> Result<(), ProcessingError> {
    let Some(instance) = bpmn.instance()? else {
        return Ok(());
    };
    let event = if instance.is(ElementLifecycle::Activating) {
        Listening::Start
    } else if instance.is(ElementLifecycle::Completing) {
        Listening::End
    } else {
        bpmn.reject_state("complete the execution listener of");
        return Ok(());
    };
    listeners::take_variables(bpmn, &instance, event)?;
    let step = match listeners::run_next(bpmn, event, instance.execution_listener_index) {
        Ok(true) => Ok(()),
        Ok(false) if event == Listening::Start => processor.on_activate(bpmn),
        Ok(false) => processor.on_complete(bpmn),
        Err(failure) => Err(failure),
    };
    bpmn.settle(step)
}

/// `TERMINATE_ELEMENT`: ELEMENT_TERMINATING, cancel the job and resolve the incidents, end
/// what runs inside first, then ELEMENT_TERMINATED and what follows, as the kind decides.
pub(super) fn terminate(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    processor: &dyn ElementProcessor,
) -> Result<(), ProcessingError> {
    let Some(instance) = bpmn.instance()? else {
        return Ok(());
    };
    if !instance.is(ElementLifecycle::Terminating) {
        bpmn.write(PI::ElementTerminating)?;
        jobs::cancel(bpmn.ctx, instance.job_key)?;
        let process = bpmn.process.clone();
        subscriptions::close_all(bpmn.ctx, &process, bpmn.index, bpmn.role, bpmn.key)?;
        if let Some(incident) = bpmn.ctx.state().incidents().of_element_instance(bpmn.key)?
            && let Some(record) = bpmn.ctx.state().incidents().get(incident)?
        {
            bpmn.ctx
                .append_event(incident, IncidentIntent::Resolved, record)?;
        }
        if processor.on_terminate(bpmn)? {
            return Ok(());
        }
    } else if still_terminating(&instance) {
        return Ok(());
    }
    processor.on_terminated(bpmn, &instance)
}

/// Whether a terminating instance still waits for something inside it to end: its children,
/// or its user task's `canceling` listeners.
fn still_terminating(instance: &ElementInstance) -> bool {
    instance.active_children > 0 || instance.job_key > 0 || instance.user_task_key > 0
}

/// `CONTINUE_TERMINATING_ELEMENT`: what the terminating instance waited for (its user task's
/// cancellation) ended: ELEMENT_TERMINATED and what follows.
pub(super) fn continue_terminating(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    processor: &dyn ElementProcessor,
) -> Result<(), ProcessingError> {
    let Some(instance) = bpmn.instance()? else {
        return Ok(());
    };
    if !instance.is(ElementLifecycle::Terminating) || still_terminating(&instance) {
        return Ok(());
    }
    processor.on_terminated(bpmn, &instance)
}
