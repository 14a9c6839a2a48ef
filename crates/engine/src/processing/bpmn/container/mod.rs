//! Elements that contain others: the process, embedded and event sub-processes. Each is the
//! container of its children (Zeebe's `BpmnElementContainerProcessor`): when a path inside it
//! ends, or a child is terminated, it decides what that means for itself.

pub(super) mod call_activity;
pub(super) mod event_sub_process;
pub(super) mod multi_instance_body;
pub(super) mod process;
pub(super) mod sub_process;

use beeline_protocol::intent::ProcessInstanceBatchIntent;
use beeline_protocol::value::ProcessInstanceBatchRecord;

use super::BpmnElementContext;
use crate::error::ProcessingError;
use crate::processing::ProcessingContext;
use crate::state::values::ElementInstance;

/// Terminates every child of a terminating instance (only containers have any). Returns
/// whether it has any, and must wait for them.
pub(super) fn terminate_children(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
) -> Result<bool, ProcessingError> {
    match bpmn.instance()? {
        Some(instance) => terminate_children_of(bpmn.ctx, &instance),
        None => Ok(false),
    }
}

/// Terminates the children of `scope` a child at a time (PROCESS_INSTANCE_BATCH TERMINATE), so
/// that no step writes a command per child. Returns whether it has any.
pub(super) fn terminate_children_of(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: &ElementInstance,
) -> Result<bool, ProcessingError> {
    if scope.active_children == 0 {
        return Ok(false);
    }
    let record = scope.record.as_ref();
    let key = ctx.next_key()?;
    ctx.append_command(
        key,
        ProcessInstanceBatchIntent::Terminate,
        ProcessInstanceBatchRecord {
            process_instance_key: record.map_or(-1, |r| r.process_instance_key),
            process_definition_key: record.map_or(-1, |r| r.process_definition_key),
            batch_element_instance_key: scope.key,
            index: 0,
        },
    );
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
