//! Elements that contain others: the process, embedded and event sub-processes. Each is the
//! container of its children (Zeebe's `BpmnElementContainerProcessor`): when a path inside it
//! ends, or a child is terminated, it decides what that means for itself.

pub(super) mod event_sub_process;
pub(super) mod process;
pub(super) mod sub_process;

use beeline_protocol::intent::ProcessInstanceIntent as PI;

use super::BpmnElementContext;
use crate::error::ProcessingError;
use crate::state::values::ElementLifecycle;

/// Terminates every child of a terminating instance (only containers have any). Returns
/// whether it has any, and must wait for them.
pub(super) fn terminate_children(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
) -> Result<bool, ProcessingError> {
    let children = bpmn.ctx.state().element_instances().children(bpmn.key)?;
    if children.is_empty() {
        return Ok(false);
    }
    for child in children {
        if let Some(child) = bpmn.ctx.state().element_instances().get(child)?
            && !child.is(ElementLifecycle::Terminating)
        {
            bpmn.ctx
                .append_command(child.key, PI::TerminateElement, child.record());
        }
    }
    Ok(true)
}

/// A process or sub-process starts at its none start event; with nothing to start, it
/// completes at once.
pub(super) fn start_at_none_start_event(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
) -> Result<(), ProcessingError> {
    let start = bpmn
        .element()
        .scope
        .as_ref()
        .and_then(|s| s.none_start_event);
    match start {
        Some(start) => bpmn.activate_element(start, bpmn.key),
        None => {
            bpmn.complete_self();
            Ok(())
        }
    }
}
