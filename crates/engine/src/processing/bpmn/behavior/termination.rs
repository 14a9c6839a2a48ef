//! Terminating element instances at once, in the command that decides it (Zeebe's
//! modification): no TERMINATE_ELEMENT commands, and the flow scope does not go on as it does
//! when a child ends on its own (it neither completes nor takes a waiting event).

use std::rc::Rc;

use beeline_bpmn::ElementData;
use beeline_protocol::Record;
use beeline_protocol::intent::{IncidentIntent, ProcessInstanceIntent as PI};

use super::{jobs, subscriptions};
use crate::error::ProcessingError;
use crate::model::InstanceRole;
use crate::processing::ProcessingContext;
use crate::processing::bpmn::container::process::ProcessProcessor;
use crate::processing::bpmn::task::user_task;
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor};
use crate::state::values::{ElementInstance, ElementLifecycle};

/// Terminates `instance` and everything inside it (its children, the process instance it
/// called): ELEMENT_TERMINATING from the top down, each with its job and user task canceled
/// (without `canceling` listeners), its incidents resolved and its subscriptions closed; then
/// ELEMENT_TERMINATED from the bottom up. A process instance that ends so answers a creation
/// awaiting its result, as any terminated process instance does.
pub(crate) fn terminate_at_once(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    instance: Rc<ElementInstance>,
) -> Result<(), ProcessingError> {
    let mut terminating = Vec::new();
    let mut pending = vec![instance];
    while let Some(current) = pending.pop() {
        let mut bpmn = BpmnElementContext::of_instance(ctx, command, &current)?;
        bpmn.write(PI::ElementTerminating)?;
        jobs::cancel(bpmn.ctx, current.job_key)?;
        user_task::cancel(&mut bpmn, false)?;
        if let Some(incident) = bpmn.ctx.state().incidents().of_element_instance(bpmn.key)?
            && let Some(record) = bpmn.ctx.state().incidents().get(incident)?
        {
            bpmn.ctx
                .append_event(incident, IncidentIntent::Resolved, record)?;
        }
        let process = bpmn.process.clone();
        subscriptions::close_all(bpmn.ctx, &process, bpmn.index, bpmn.role, bpmn.key)?;
        let element = bpmn.element();
        let contains = element.scope.is_some() || bpmn.role == InstanceRole::MultiInstanceBody;
        let calls = matches!(element.data, ElementData::CallActivity(_))
            && bpmn.role != InstanceRole::MultiInstanceBody;
        let instances = ctx.state().element_instances();
        if contains {
            for key in instances.children(current.key)? {
                if let Some(child) = instances.get(key)?
                    && !child.is(ElementLifecycle::Terminating)
                {
                    pending.push(child);
                }
            }
        } else if calls
            && current.called_child_key > 0
            && let Some(child) = instances.get(current.called_child_key)?
            && !child.is(ElementLifecycle::Terminating)
        {
            pending.push(child);
        }
        terminating.push(current);
    }
    while let Some(current) = terminating.pop() {
        let mut bpmn = BpmnElementContext::of_instance(ctx, command, &current)?;
        let record = current.record();
        if record.flow_scope_key <= 0 && record.parent_element_instance_key <= 0 {
            ProcessProcessor.on_terminated(&mut bpmn, &current)?;
        } else {
            bpmn.write(PI::ElementTerminated)?;
        }
    }
    Ok(())
}

/// Whether `instance` may be terminated because nothing is left in it: no children, no token
/// on its way.
pub(crate) fn is_empty(instance: &ElementInstance) -> bool {
    instance.active_children == 0 && instance.active_flows == 0
}
