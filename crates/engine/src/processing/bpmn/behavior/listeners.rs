//! Execution listeners (`zeebe:executionListeners`, Zeebe's handling of them in
//! `BpmnStreamProcessor`): jobs of kind EXECUTION_LISTENER that run one after another, in
//! model order, after an element's input mappings (`start`) and after its output mappings
//! (`end`). The element waits in ELEMENT_ACTIVATING or ELEMENT_COMPLETING until the last one
//! has completed; each completion comes back as `PROCESS_INSTANCE COMPLETE_EXECUTION_LISTENER`.
//! A start listener's variables become locals of the element, an end listener's locals of
//! its flow scope. Multi-instance activities run them on each inner instance, not the body.

use beeline_bpmn::{ExecutionListener, ExecutionListenerEventType};

use super::jobs::{self, JobKind};
use super::variables::{Document, VariableOwner, merge_local};
use crate::error::ProcessingError;
use crate::processing::bpmn::{BpmnElementContext, Step};
use crate::state::values::ElementInstance;

/// The `index`th listener of `event` of the instance's element, if it has one.
fn listener<'p>(
    bpmn: &'p BpmnElementContext<'_, '_, '_>,
    event: ExecutionListenerEventType,
    index: i32,
) -> Option<&'p ExecutionListener> {
    if !bpmn.role.runs_element() {
        return None;
    }
    let index = usize::try_from(index).ok()?;
    bpmn.element()
        .execution_listeners
        .iter()
        .filter(|listener| listener.event_type == event)
        .nth(index)
}

/// Creates the job of the `index`th listener of `event`, if there is one: returns whether
/// the element now waits for it. Its type and retries are evaluated first; a failure is an
/// incident, after whose resolution the listeners of `event` run again from the first.
pub(crate) fn run_next(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    event: ExecutionListenerEventType,
    index: i32,
) -> Step<bool> {
    let Some(listener) = listener(bpmn, event, index).cloned() else {
        return Ok(false);
    };
    let (job_type, retries) = jobs::evaluate(bpmn, &listener.job_type, &listener.retries)?;
    jobs::create(
        bpmn,
        JobKind::ExecutionListener(event),
        job_type,
        retries,
        jobs::headers(&listener.task_headers),
    )?;
    Ok(true)
}

/// Merges what the last listener job of `event` completed with: a start listener's
/// variables into the element instance, an end listener's into its flow scope (the process
/// instance's own, for the process).
pub(crate) fn take_variables(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    instance: &ElementInstance,
    event: ExecutionListenerEventType,
) -> Result<(), ProcessingError> {
    let Some(bytes) = &instance.listener_variables else {
        return Ok(());
    };
    // Checked when the job was completed.
    let document = Document::parse(bytes).map_err(ProcessingError::Internal)?;
    if document.is_empty() {
        return Ok(());
    }
    let scope = match event {
        ExecutionListenerEventType::End if bpmn.record.flow_scope_key > 0 => {
            bpmn.record.flow_scope_key
        }
        _ => bpmn.key,
    };
    let owner = VariableOwner::of(&bpmn.record);
    merge_local(bpmn.ctx, scope, &document, &owner)
}
