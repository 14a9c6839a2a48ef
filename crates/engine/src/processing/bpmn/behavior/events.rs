//! Events that cross elements: finding what catches an error or an escalation, and
//! triggering a catching element (a boundary event, an event sub-process, a catch event).
//!
//! A trigger is a PROCESS_EVENT TRIGGERING record keyed by the instance key the catching
//! element will get (or has, for a waiting catch event); that element takes it with
//! PROCESS_EVENT TRIGGERED when it runs, and completes with the event's variables.

use std::rc::Rc;
use std::sync::Arc;

use super::variables::Document;
use beeline_bpmn::{Element, ElementData, ElementIndex, EventDefinition, ExprOrStatic, Process};
use beeline_protocol::intent::{ProcessEventIntent, ProcessInstanceIntent as PI};
use beeline_protocol::value::ProcessEventRecord;

use crate::error::ProcessingError;
use crate::model::{DeployedProcess, InstanceRole, element_types};
use crate::processing::ProcessingContext;
use crate::state::values::{ElementInstance, ElementLifecycle};

/// What catches an event.
#[derive(Debug, Clone)]
pub(crate) enum Catch {
    /// A boundary event on an active activity.
    Boundary {
        attached: Rc<ElementInstance>,
        boundary: ElementIndex,
        interrupting: bool,
    },
    /// An event sub-process of an active scope.
    EventSubProcess {
        scope: Rc<ElementInstance>,
        sub_process: ElementIndex,
        interrupting: bool,
    },
    /// An element that waits for the event itself: an intermediate catch event, a receive
    /// task.
    Waiting { instance: Rc<ElementInstance> },
    /// One of the events after an event-based gateway: the first one wins.
    Gateway {
        gateway: Rc<ElementInstance>,
        event: ElementIndex,
    },
}

impl Catch {
    /// The catching element (the boundary event, or the event sub-process's start event).
    pub fn element<'p>(&self, model: &'p Process) -> &'p Element {
        match self {
            Catch::Boundary { boundary, .. } => &model[*boundary],
            Catch::EventSubProcess { sub_process, .. } => &model[start_of(model, *sub_process)],
            Catch::Waiting { instance } => model
                .element_by_id(&instance.record().element_id)
                .map_or_else(|| model.root(), |(_, e)| e),
            Catch::Gateway { event, .. } => &model[*event],
        }
    }

    /// Whether the catch ends what it catches for: an interrupting boundary event or event
    /// sub-process, and elements that complete with the event.
    pub fn interrupting(&self) -> bool {
        match self {
            Catch::Boundary { interrupting, .. } | Catch::EventSubProcess { interrupting, .. } => {
                *interrupting
            }
            Catch::Waiting { .. } | Catch::Gateway { .. } => true,
        }
    }

    /// The element instance whose event it is.
    fn owner(&self) -> &ElementInstance {
        match self {
            Catch::Boundary { attached, .. } => attached,
            Catch::EventSubProcess { scope, .. } => scope,
            Catch::Waiting { instance } => instance,
            Catch::Gateway { gateway, .. } => gateway,
        }
    }
}

/// What catches an event for the element instance `instance` at its catch element `target`
/// (the subscription's target): `None` when `target` is not one of its catch elements.
pub(crate) fn catch_of(
    process: &DeployedProcess,
    instance: &Rc<ElementInstance>,
    target: &str,
) -> Option<Catch> {
    let model = &process.model;
    let record = instance.record.as_ref()?;
    let index = process.element(&record.element_id)?;
    let target = process.element(target)?;
    let element = &model[index];
    let role = InstanceRole::of(element, record);
    if target == index && role.runs_element() {
        return Some(Catch::Waiting {
            instance: instance.clone(),
        });
    }
    if role.has_boundary_and_flows() && element.boundary_events.contains(&target) {
        let ElementData::BoundaryEvent(data) = &model[target].data else {
            return None;
        };
        return Some(Catch::Boundary {
            attached: instance.clone(),
            boundary: target,
            interrupting: data.cancel_activity,
        });
    }
    if let Some(sub_process) = model[target].parent
        && role.runs_element()
        && matches!(model[sub_process].data, ElementData::EventSubProcess)
        && model[sub_process].parent == Some(index)
    {
        let ElementData::StartEvent(data) = &model[target].data else {
            return None;
        };
        return Some(Catch::EventSubProcess {
            scope: instance.clone(),
            sub_process,
            interrupting: data.interrupting,
        });
    }
    if matches!(element.data, ElementData::EventBasedGateway)
        && element.outgoing.iter().any(|&f| model[f].target == target)
    {
        return Some(Catch::Gateway {
            gateway: instance.clone(),
            event: target,
        });
    }
    None
}

/// Whether the catch can take an event now: its element instance is active and not being
/// interrupted, and an element that waits (or a gateway) has no event on its way yet.
pub(crate) fn can_trigger(
    ctx: &ProcessingContext<'_, '_>,
    catch: &Catch,
) -> Result<bool, ProcessingError> {
    let owner = catch.owner();
    let Some(current) = ctx.state().element_instances().get(owner.key)? else {
        return Ok(false);
    };
    if !current.is(ElementLifecycle::Activated) || current.interrupted {
        return Ok(false);
    }
    Ok(match catch {
        Catch::Waiting { instance } => ctx.state().event_triggers().get(instance.key)?.is_none(),
        Catch::Gateway { gateway, .. } => ctx
            .state()
            .event_triggers()
            .of_scope(gateway.key)?
            .is_empty(),
        Catch::Boundary { .. } | Catch::EventSubProcess { .. } => true,
    })
}

/// The start event of an event sub-process.
pub(crate) fn start_of(model: &Process, sub_process: ElementIndex) -> ElementIndex {
    model[sub_process]
        .scope
        .as_ref()
        .and_then(|s| s.start_events.first().copied())
        .unwrap_or(sub_process)
}

/// What kind of event is looked for, and how a catching definition matches it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Thrown<'c> {
    Error(&'c str),
    Escalation(&'c str),
}

/// Whether `definition` catches the event: the same code, or a catch-all. `Some(true)` for an
/// exact match, `Some(false)` for a catch-all.
fn catches(definition: Option<&EventDefinition>, thrown: Thrown<'_>) -> Option<bool> {
    let code = match (definition?, thrown) {
        (EventDefinition::Error(e), Thrown::Error(_)) => {
            e.error.as_ref().and_then(|r| r.error_code.clone())
        }
        (EventDefinition::Escalation(e), Thrown::Escalation(_)) => e
            .escalation
            .as_ref()
            .and_then(|r| r.escalation_code.clone()),
        _ => return None,
    };
    let wanted = match thrown {
        Thrown::Error(c) | Thrown::Escalation(c) => c,
    };
    match code {
        None => Some(false),
        Some(ExprOrStatic::Static(code)) if code == wanted => Some(true),
        Some(_) => None,
    }
}

/// The nearest catch of `thrown`, from the element instance `from` outwards: boundary events
/// of each enclosing activity, then event sub-processes of each enclosing scope, and on from
/// a process instance a call activity created to that call activity. An exact code wins over
/// a catch-all at the same level. Returns the catch with the process it is in.
pub(crate) fn find_catch(
    ctx: &ProcessingContext<'_, '_>,
    process: &Arc<DeployedProcess>,
    from: i64,
    thrown: Thrown<'_>,
) -> Result<Option<(Arc<DeployedProcess>, Catch)>, ProcessingError> {
    let mut process = process.clone();
    let mut current = ctx.state().element_instances().get(from)?;
    while let Some(instance) = current {
        let record = instance.record();
        let Some(index) = process.element(&record.element_id) else {
            break;
        };
        if let Some(catch) = catch_at(&process.model, &instance, index, thrown) {
            return Ok(Some((process, catch)));
        }
        current = if record.flow_scope_key > 0 {
            ctx.state().element_instances().get(record.flow_scope_key)?
        } else if record.parent_element_instance_key > 0 {
            let call = ctx
                .state()
                .element_instances()
                .get(record.parent_element_instance_key)?;
            if let Some(call) = &call {
                process = crate::model::deployed(ctx.state(), &call.record())?;
            }
            call
        } else {
            None
        };
    }
    Ok(None)
}

/// What catches `thrown` at `instance`, an instance of `index`: one of its boundary events,
/// or an event sub-process of the scope it is.
fn catch_at(
    model: &Process,
    instance: &Rc<ElementInstance>,
    index: ElementIndex,
    thrown: Thrown<'_>,
) -> Option<Catch> {
    let element = &model[index];
    let role = instance
        .record
        .as_ref()
        .map_or(InstanceRole::Element, |record| {
            InstanceRole::of(element, record)
        });
    let boundary_events: &[ElementIndex] = if role.has_boundary_and_flows() {
        &element.boundary_events
    } else {
        &[]
    };
    let mut best: Option<(bool, Catch)> = None;
    for &boundary in boundary_events {
        let ElementData::BoundaryEvent(data) = &model[boundary].data else {
            continue;
        };
        if let Some(exact) = catches(Some(&data.event), thrown)
            && best.as_ref().is_none_or(|(b, _)| exact && !b)
        {
            best = Some((
                exact,
                Catch::Boundary {
                    attached: instance.clone(),
                    boundary,
                    interrupting: data.cancel_activity,
                },
            ));
        }
    }
    if best.is_none()
        && role.runs_element()
        && let Some(scope) = &element.scope
    {
        for &sub_process in &scope.event_sub_processes {
            let start = &model[start_of(model, sub_process)];
            let ElementData::StartEvent(data) = &start.data else {
                continue;
            };
            if let Some(exact) = catches(Some(&data.event), thrown)
                && best.as_ref().is_none_or(|(b, _)| exact && !b)
            {
                best = Some((
                    exact,
                    Catch::EventSubProcess {
                        scope: instance.clone(),
                        sub_process,
                        interrupting: data.interrupting,
                    },
                ));
            }
        }
    }
    best.map(|(_, catch)| catch)
}

/// Triggers a catch with `variables`: an interrupting catch first terminates what it
/// interrupts, and runs once that is done.
pub(crate) fn trigger(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    catch: &Catch,
    variables: &Document,
) -> Result<(), ProcessingError> {
    let model = &process.model;
    let key = ctx.next_key()?;
    let (scope, target, interrupting) = match catch {
        Catch::Boundary {
            attached,
            boundary,
            interrupting,
        } => (attached, *boundary, *interrupting),
        Catch::EventSubProcess {
            scope,
            sub_process,
            interrupting,
        } => (scope, start_of(model, *sub_process), *interrupting),
        Catch::Waiting { instance } => {
            let Some(index) = process.element(&instance.record().element_id) else {
                return Ok(());
            };
            (instance, index, false)
        }
        Catch::Gateway { gateway, event } => (gateway, *event, false),
    };
    // A waiting element takes the event under its own key.
    let key = match catch {
        Catch::Waiting { instance } => instance.key,
        _ => key,
    };
    let record = scope.record();
    ctx.append_event(
        key,
        ProcessEventIntent::Triggering,
        ProcessEventRecord {
            scope_key: scope.key,
            target_element_id: model[target].id.clone(),
            variables: variables.to_bytes(),
            process_definition_key: record.process_definition_key,
            process_instance_key: record.process_instance_key,
            tenant_id: record.tenant_id.clone(),
            interrupting,
        },
    )?;
    match catch {
        Catch::Boundary {
            attached, boundary, ..
        } => {
            if interrupting {
                // The boundary event starts once its activity is terminated.
                ctx.append_command(attached.key, PI::TerminateElement, attached.record());
            } else {
                activate(ctx, process, key, *boundary, record.flow_scope_key, &record);
            }
        }
        Catch::EventSubProcess {
            scope, sub_process, ..
        } => {
            let children = if interrupting {
                ctx.state().element_instances().children(scope.key)?
            } else {
                Vec::new()
            };
            if children.is_empty() {
                let sub_process_key = ctx.next_key()?;
                activate(
                    ctx,
                    process,
                    sub_process_key,
                    *sub_process,
                    scope.key,
                    &record,
                );
            }
            for child in children {
                if let Some(child) = ctx.state().element_instances().get(child)? {
                    ctx.append_command(child.key, PI::TerminateElement, child.record());
                }
            }
            if interrupting {
                // The scope is interrupted: its other event sub-processes stop waiting.
                super::subscriptions::close(ctx, process, scope.key, |target| {
                    !is_event_sub_process_start(model, target)
                })?;
            }
        }
        Catch::Waiting { instance }
        | Catch::Gateway {
            gateway: instance, ..
        } => {
            // The element completes; the gateway then continues at the event that won.
            ctx.append_command(instance.key, PI::CompleteElement, instance.record());
        }
    }
    Ok(())
}

/// Whether `target` is the start event of an event sub-process.
pub(crate) fn is_event_sub_process_start(model: &Process, target: ElementIndex) -> bool {
    model[target]
        .parent
        .is_some_and(|p| matches!(model[p].data, ElementData::EventSubProcess))
}

/// Starts a new instance of `process` at the start event `start` (a timer, message or signal
/// start event) with the event's variables; `instance_key` is the new instance's key.
pub(crate) fn start_instance(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    start: ElementIndex,
    variables: Vec<u8>,
    instance_key: i64,
) -> Result<(), ProcessingError> {
    let start_key = ctx.next_key()?;
    let record = crate::processing::process_instance::root_record(process, instance_key);
    ctx.append_event(
        start_key,
        ProcessEventIntent::Triggering,
        ProcessEventRecord {
            scope_key: instance_key,
            target_element_id: process.model[start].id.clone(),
            variables,
            process_definition_key: process.key,
            process_instance_key: instance_key,
            tenant_id: process.tenant_id.clone(),
            interrupting: false,
        },
    )?;
    ctx.append_command(instance_key, PI::ActivateElement, record);
    Ok(())
}

/// The start event an instance was started at by an event, with the key it takes the event
/// under: `None` for an instance started at its none start event.
pub(crate) fn triggered_start(
    ctx: &ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    instance_key: i64,
) -> Result<Option<(i64, ElementIndex)>, ProcessingError> {
    for (key, event) in ctx.state().event_triggers().of_scope(instance_key)? {
        if let Some(index) = process.element(&event.target_element_id)
            && matches!(process.model[index].data, ElementData::StartEvent(_))
            && process.model[index].parent == Some(ElementIndex::PROCESS)
        {
            return Ok(Some((key, index)));
        }
    }
    Ok(None)
}

/// Writes the ACTIVATE_ELEMENT command of `index` with `key` in the scope `flow_scope_key`.
pub(crate) fn activate(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    key: i64,
    index: ElementIndex,
    flow_scope_key: i64,
    like: &beeline_protocol::value::ProcessInstanceRecord,
) {
    let element = &process.model[index];
    let (element_type, event_type) = element_types(element);
    ctx.append_command(
        key,
        PI::ActivateElement,
        beeline_protocol::value::ProcessInstanceRecord {
            element_id: element.id.clone(),
            flow_scope_key,
            bpmn_element_type: element_type.to_string(),
            bpmn_event_type: event_type.to_string(),
            ..like.clone()
        },
    );
}

/// After `instance` was terminated: an interrupting boundary event that waited for it starts
/// now. Returns whether one did.
pub(crate) fn start_waiting_boundary(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    instance: &ElementInstance,
) -> Result<bool, ProcessingError> {
    let record = instance.record();
    let mut started = false;
    for (key, event) in ctx.state().event_triggers().of_scope(instance.key)? {
        if key == instance.key {
            continue;
        }
        if let Some(index) = process.element(&event.target_element_id)
            && matches!(process.model[index].data, ElementData::BoundaryEvent(_))
        {
            activate(ctx, process, key, index, record.flow_scope_key, &record);
            started = true;
        }
    }
    Ok(started)
}

/// After the last child of an interrupted scope was terminated: the event sub-process that
/// interrupted it starts now. Returns whether one did.
pub(crate) fn start_waiting_event_sub_process(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    scope: &ElementInstance,
) -> Result<bool, ProcessingError> {
    let record = scope.record();
    for (_, event) in ctx.state().event_triggers().of_scope(scope.key)? {
        let Some(start) = process.element(&event.target_element_id) else {
            continue;
        };
        let Some(sub_process) = process.model[start].parent else {
            continue;
        };
        if matches!(
            process.model[sub_process].data,
            ElementData::EventSubProcess
        ) && event.interrupting
        {
            let key = ctx.next_key()?;
            activate(ctx, process, key, sub_process, scope.key, &record);
            return Ok(true);
        }
    }
    Ok(false)
}
