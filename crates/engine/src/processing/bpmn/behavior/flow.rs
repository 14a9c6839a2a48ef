//! Tokens between elements: taking sequence flows, joining gateways, and completing a scope
//! when nothing is left in it (Zeebe's `BpmnStateTransitionBehavior`).

use std::collections::{HashSet, VecDeque};

use beeline_bpmn::{ElementData, ElementIndex, Process, SequenceFlowIndex};
use beeline_protocol::intent::ProcessInstanceIntent;
use beeline_protocol::value::ProcessInstanceRecord;

use crate::error::ProcessingError;
use crate::model::is_joining;
use crate::processing::bpmn::{BpmnElementContext, Step, container_of};
use crate::state::values::{ElementInstance, ElementLifecycle};

/// Takes each flow (SEQUENCE_FLOW_TAKEN) and starts what it leads to.
pub(crate) fn take(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    flows: &[SequenceFlowIndex],
) -> Result<(), ProcessingError> {
    let scope = bpmn.record.flow_scope_key;
    for &flow in flows {
        let target = write_taken(bpmn, flow)?;
        arrive(bpmn, target, scope)?;
    }
    Ok(())
}

/// Takes one flow to an element that starts under `key` (the event after an event-based
/// gateway, which takes its event under the key it was triggered for).
pub(crate) fn take_to(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    flow: SequenceFlowIndex,
    key: i64,
) -> Result<(), ProcessingError> {
    let target = write_taken(bpmn, flow)?;
    let record = bpmn.record_of(target, bpmn.record.flow_scope_key);
    bpmn.ctx
        .append_command(key, ProcessInstanceIntent::ActivateElement, record);
    Ok(())
}

/// SEQUENCE_FLOW_TAKEN for `flow`; returns its target.
fn write_taken(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    flow: SequenceFlowIndex,
) -> Result<ElementIndex, ProcessingError> {
    let sequence_flow = &bpmn.process.model[flow];
    let (id, target) = (sequence_flow.id.clone(), sequence_flow.target);
    let key = bpmn.ctx.next_key()?;
    let record = ProcessInstanceRecord {
        element_id: id,
        flow_scope_key: bpmn.record.flow_scope_key,
        bpmn_element_type: "SEQUENCE_FLOW".to_string(),
        bpmn_event_type: "UNSPECIFIED".to_string(),
        ..bpmn.record.clone()
    };
    bpmn.ctx
        .append_event(key, ProcessInstanceIntent::SequenceFlowTaken, record)?;
    Ok(target)
}

/// A token arrived at `target`: start it, unless it is a join still waiting for others.
fn arrive(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    target: ElementIndex,
    scope: i64,
) -> Result<(), ProcessingError> {
    if !is_joining(&bpmn.process.model, target) {
        return bpmn.activate_element(target, scope);
    }
    if join_ready(bpmn, target, scope)? {
        bpmn.activate_element(target, scope)?;
    }
    Ok(())
}

/// A parallel join needs a token on every incoming flow; an inclusive join on every incoming
/// flow that can still get one.
fn join_ready(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    gateway: ElementIndex,
    scope: i64,
) -> Result<bool, ProcessingError> {
    let model = &bpmn.process.model;
    let element = &model[gateway];
    let instances = bpmn.ctx.state().element_instances();
    let mut waiting = Vec::new();
    for &flow in &element.incoming {
        if instances.taken_flows(scope, &element.id, &model[flow].id)? == 0 {
            waiting.push(flow);
        }
    }
    if waiting.is_empty() {
        return Ok(true);
    }
    if matches!(element.data, ElementData::ParallelGateway) {
        return Ok(false);
    }
    inclusive_join_unreachable(bpmn, gateway, scope, &waiting)
}

/// Whether no token in the scope can still reach one of the `waiting` flows of an inclusive
/// join: every token is accounted for (none in flight), and none of the active elements or
/// tokens waiting at other joins has a path to those flows.
fn inclusive_join_unreachable(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    gateway: ElementIndex,
    scope: i64,
    waiting: &[SequenceFlowIndex],
) -> Result<bool, ProcessingError> {
    let model = &bpmn.process.model;
    let state = bpmn.ctx.state();
    let Some(scope_instance) = state.element_instances().get(scope)? else {
        return Ok(false);
    };
    let children = state.element_instances().children(scope)?;
    let mut sources: Vec<ElementIndex> = Vec::new();
    for child in children {
        if let Some(instance) = state.element_instances().get(child)?
            && let Some(index) = bpmn.process.element(&instance.record().element_id)
        {
            sources.push(index);
        }
    }
    // Tokens at joins: each waiting token counts as an in-flight flow of the scope.
    let mut waiting_tokens = 0;
    let gateway_id = &model[gateway].id;
    for (index, element) in model.iter() {
        if !is_joining(model, index) {
            continue;
        }
        let mut has_tokens = false;
        for &flow in &element.incoming {
            let count =
                state
                    .element_instances()
                    .taken_flows(scope, &element.id, &model[flow].id)?;
            waiting_tokens += count;
            has_tokens |= count > 0;
        }
        if has_tokens && &element.id != gateway_id {
            sources.push(index);
        }
    }
    if scope_instance.active_flows > waiting_tokens as i32 {
        // A token is on its way somewhere; decide when it has arrived.
        return Ok(false);
    }
    let targets: HashSet<SequenceFlowIndex> = waiting.iter().copied().collect();
    Ok(!sources
        .iter()
        .any(|&source| reaches(model, source, gateway, &targets)))
}

/// Whether a path from `source` takes one of `flows` into `gateway`.
fn reaches(
    model: &Process,
    source: ElementIndex,
    gateway: ElementIndex,
    flows: &HashSet<SequenceFlowIndex>,
) -> bool {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([source]);
    while let Some(current) = queue.pop_front() {
        if !seen.insert(current) {
            continue;
        }
        for &flow in &model[current].outgoing {
            if flows.contains(&flow) {
                return true;
            }
            let next = model[flow].target;
            if next != gateway {
                queue.push_back(next);
            }
        }
    }
    false
}

/// After something in a scope ended: waiting inclusive joins may now be ready.
pub(crate) fn recheck_inclusive_joins(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    scope: i64,
) -> Result<(), ProcessingError> {
    let model = bpmn.process.model.clone();
    for (index, element) in model.iter() {
        if !is_joining(&model, index) || !matches!(element.data, ElementData::InclusiveGateway(_)) {
            continue;
        }
        let mut has_tokens = false;
        for &flow in &element.incoming {
            has_tokens |= bpmn.ctx.state().element_instances().taken_flows(
                scope,
                &element.id,
                &model[flow].id,
            )? > 0;
        }
        if has_tokens && join_ready(bpmn, index, scope)? {
            bpmn.activate_element(index, scope)?;
        }
    }
    Ok(())
}

/// Writes ELEMENT_COMPLETED and leaves the element: on its outgoing flows, or at the end of its
/// path, which the container of its scope hears of before (it may still stop the completion
/// with an incident: a multi-instance body's output collection) and after.
pub(crate) fn complete_and_leave(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
    let process = bpmn.process.clone();
    let outgoing: &[SequenceFlowIndex] = if bpmn.role.has_boundary_and_flows() {
        &process.model[bpmn.index].outgoing
    } else {
        &[]
    };
    if !outgoing.is_empty() {
        bpmn.write(ProcessInstanceIntent::ElementCompleted)?;
        take(bpmn, outgoing)?;
        return Ok(());
    }
    let fulfilled = match bpmn
        .ctx
        .state()
        .element_instances()
        .get(bpmn.record.flow_scope_key)?
    {
        Some(scope) => container_of(bpmn, &scope)?.before_path_completed(bpmn, &scope)?,
        None => false,
    };
    bpmn.write(ProcessInstanceIntent::ElementCompleted)?;
    path_ended_with(bpmn, fulfilled)?;
    Ok(())
}

/// A token ended here (no outgoing flow): the scope's container decides what that means (a
/// scope with nothing left in it completes), and inclusive joins that waited for this token
/// may go on without it.
pub(crate) fn path_ended(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Result<(), ProcessingError> {
    path_ended_with(bpmn, false)
}

fn path_ended_with(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    condition_fulfilled: bool,
) -> Result<(), ProcessingError> {
    let scope_key = bpmn.record.flow_scope_key;
    if let Some(scope) = bpmn.ctx.state().element_instances().get(scope_key)? {
        container_of(bpmn, &scope)?.after_path_completed(bpmn, &scope, condition_fulfilled)?;
    }
    recheck_inclusive_joins(bpmn, scope_key)
}

/// Completes `scope` if nothing is active or on its way in it any more.
pub(crate) fn complete_if_done(bpmn: &mut BpmnElementContext<'_, '_, '_>, scope: &ElementInstance) {
    if scope.is(ElementLifecycle::Activated)
        && scope.active_children == 0
        && scope.active_flows == 0
    {
        complete_instance(bpmn, scope);
    }
}

fn complete_instance(bpmn: &mut BpmnElementContext<'_, '_, '_>, instance: &ElementInstance) {
    bpmn.ctx.append_command(
        instance.key,
        ProcessInstanceIntent::CompleteElement,
        instance.record(),
    );
}

/// After this element was terminated (or a terminate end event ended its scope's other
/// children): its scope's container goes on.
pub(crate) fn after_terminated(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
) -> Result<(), ProcessingError> {
    let scope_key = bpmn.record.flow_scope_key;
    let Some(scope) = bpmn.ctx.state().element_instances().get(scope_key)? else {
        return Ok(());
    };
    container_of(bpmn, &scope)?.on_child_terminated(bpmn, &scope)
}

/// What a scope does when a child was terminated: a terminating scope with no children left
/// terminates in turn; an active scope whose children were all terminated (by a terminate end
/// event, or an interrupting event sub-process) completes, or starts that event sub-process.
pub(crate) fn continue_after_child_terminated(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    scope: &ElementInstance,
) -> Result<(), ProcessingError> {
    if scope.active_children > 0 {
        return Ok(());
    }
    if scope.is(ElementLifecycle::Terminating) {
        // Continue the scope's termination in this batch.
        bpmn.ctx.append_command(
            scope.key,
            ProcessInstanceIntent::TerminateElement,
            scope.record(),
        );
    } else if scope.is(ElementLifecycle::Activated) {
        // An interrupting event sub-process waited for the scope to be empty.
        let process = bpmn.process.clone();
        if super::events::start_waiting_event_sub_process(bpmn.ctx, &process, scope)? {
            return Ok(());
        }
        if scope.interrupted || scope.active_flows == 0 {
            complete_instance(bpmn, scope);
        }
    }
    Ok(())
}
