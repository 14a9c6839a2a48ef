//! Activating an element from outside its flow (Zeebe's `ElementActivationBehavior`): the start
//! instructions of a new instance and the activate instructions of a modification.
//!
//! The element's flow scopes are found or made from the process down: an existing instance of
//! a scope is used when it is the only one (or the one the caller selected through an ancestor
//! instance); a missing one is made with ELEMENT_ACTIVATING and ELEMENT_ACTIVATED and its event
//! subscriptions, without its start event or input mappings. The element itself is activated by
//! an ACTIVATE_ELEMENT command, as a flow would.

use std::sync::Arc;

use beeline_bpmn::{ElementData, ElementIndex};
use beeline_protocol::intent::ProcessInstanceIntent as PI;
use beeline_protocol::value::ProcessInstanceRecord;
use beeline_protocol::{Record, RejectionType};

use super::subscriptions;
use crate::error::ProcessingError;
use crate::model::{DeployedProcess, InstanceRole, MULTI_INSTANCE_BODY};
use crate::processing::ProcessingContext;
use crate::processing::bpmn::{BpmnElementContext, Failure};

/// No ancestor selected: the engine chooses the flow scope instance.
pub(crate) const NO_ANCESTOR: i64 = -1;

/// Zeebe's element types a start or activate instruction may name (all but start events,
/// boundary events and sequence flows), as its rejections list them.
pub(crate) const SUPPORTED_ELEMENT_TYPES: &str = "[PROCESS, SUB_PROCESS, EVENT_SUB_PROCESS, AD_HOC_SUB_PROCESS, INTERMEDIATE_CATCH_EVENT, INTERMEDIATE_THROW_EVENT, END_EVENT, SERVICE_TASK, RECEIVE_TASK, USER_TASK, MANUAL_TASK, TASK, EXCLUSIVE_GATEWAY, PARALLEL_GATEWAY, EVENT_BASED_GATEWAY, INCLUSIVE_GATEWAY, MULTI_INSTANCE_BODY, CALL_ACTIVITY, BUSINESS_RULE_TASK, SCRIPT_TASK, SEND_TASK]";

/// Whether an event-based gateway leads to `index`.
pub(crate) fn after_event_based_gateway(process: &DeployedProcess, index: ElementIndex) -> bool {
    process.model[index].incoming.iter().any(|&flow| {
        matches!(
            process.model[process.model[flow].source].data,
            ElementData::EventBasedGateway
        )
    })
}

/// Where an activation happened.
#[derive(Debug, Default)]
pub(crate) struct Activated {
    /// The key the element is activated under.
    pub element_instance_key: i64,
    /// Every flow scope instance it is activated in, found or made, from the process down.
    pub flow_scope_keys: Vec<i64>,
}

/// The variables to set in an instance the activation passes through (the element id and the
/// instance's key), before the instance's element goes on.
pub(crate) type SetVariables<'f> =
    dyn FnMut(&mut ProcessingContext<'_, '_>, &str, i64) -> Result<(), ProcessingError> + 'f;

/// One level of an element's flow scopes: an element, and which part of it the instance is (a
/// multi-instance sub-process is its body, then an inner instance).
type Level = (ElementIndex, InstanceRole);

/// The flow scopes of `target`, from the process down (the process first).
pub(crate) fn flow_scopes(process: &DeployedProcess, target: ElementIndex) -> Vec<Level> {
    let mut levels = Vec::new();
    let mut current = process.model[target].parent;
    while let Some(index) = current {
        if process.model[index].multi_instance.is_some() {
            levels.push((index, InstanceRole::MultiInstanceInner));
            levels.push((index, InstanceRole::MultiInstanceBody));
        } else {
            levels.push((index, InstanceRole::Element));
        }
        current = process.model[index].parent;
    }
    levels.reverse();
    levels
}

/// Activates `target` in the instance `root` (the process instance's record; its instance is
/// made first if it does not exist yet), in the flow scope instances below `ancestor` (or
/// [`NO_ANCESTOR`]). What may not be done is a [`ProcessingError::Rejected`]: the caller's
/// command is rejected and everything written is rolled back.
pub(crate) fn activate(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    process: &Arc<DeployedProcess>,
    root: &ProcessInstanceRecord,
    target: ElementIndex,
    ancestor: i64,
    variables: &mut SetVariables<'_>,
) -> Result<Activated, ProcessingError> {
    let mut activated = Activated::default();
    let mut scope_key = -1;
    for (level, (index, role)) in flow_scopes(process, target).into_iter().enumerate() {
        let found = if level == 0 {
            ctx.state()
                .element_instances()
                .get(root.process_instance_key)?
                .map(|instance| instance.key)
        } else {
            reusable_instance(ctx, process, index, role, scope_key, ancestor)?
        };
        scope_key = match found {
            Some(key) => {
                variables(ctx, &process.model[index].id, key)?;
                key
            }
            None if role != InstanceRole::Element => {
                return Err(ProcessingError::Rejected(
                    RejectionType::InvalidArgument,
                    format!(
                        "Expected to modify instance of process '{}' but it contains one or more activate instructions that would result in the activation of multi-instance element '{}', which is currently unsupported.",
                        process.bpmn_process_id, process.model[index].id
                    ),
                ));
            }
            None => make_flow_scope(ctx, command, process, root, index, scope_key, variables)?,
        };
        activated.flow_scope_keys.push(scope_key);
    }
    let key = ctx.next_key()?;
    let record = record_of(process, root, target, scope_key);
    ctx.append_command(key, PI::ActivateElement, record);
    variables(ctx, &process.model[target].id, key)?;
    activated.element_instance_key = key;
    Ok(activated)
}

/// The record of an instance of `index` in the flow scope `flow_scope_key` of `root`'s
/// process instance.
fn record_of(
    process: &DeployedProcess,
    root: &ProcessInstanceRecord,
    index: ElementIndex,
    flow_scope_key: i64,
) -> ProcessInstanceRecord {
    let element = &process.model[index];
    let (element_type, event_type) = crate::model::element_types(element);
    ProcessInstanceRecord {
        element_id: element.id.clone(),
        flow_scope_key,
        bpmn_element_type: element_type.to_string(),
        bpmn_event_type: event_type.to_string(),
        ..root.clone()
    }
}

/// The instance of the flow scope `index` (in `role`) inside `scope_key` that an activation
/// goes through, or `None` when a new one is to be made (Zeebe's rules for choosing among
/// several, by the selected ancestor).
fn reusable_instance(
    ctx: &ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    index: ElementIndex,
    role: InstanceRole,
    scope_key: i64,
    ancestor: i64,
) -> Result<Option<i64>, ProcessingError> {
    let id = &process.model[index].id;
    let instances = ctx.state().element_instances();
    let mut candidates = Vec::new();
    for key in instances.children(scope_key)? {
        let Some(child) = instances.get(key)? else {
            continue;
        };
        let record = child.record();
        let is_body = record.bpmn_element_type == MULTI_INSTANCE_BODY;
        if &record.element_id == id && is_body == (role == InstanceRole::MultiInstanceBody) {
            candidates.push(child.key);
        }
    }
    let selected = ancestor != NO_ANCESTOR;
    match candidates.as_slice() {
        [] => Ok(None),
        [only] if selected && is_ancestor_of(ctx, ancestor, *only)? => Ok(None),
        [only] => Ok(Some(*only)),
        _ if !selected => Err(more_than_one(process, id)),
        many if many.contains(&ancestor) => Ok(Some(ancestor)),
        many => {
            for &candidate in many {
                if is_ancestor_of(ctx, ancestor, candidate)? {
                    return Ok(None);
                }
            }
            for &candidate in many {
                if is_ancestor_of(ctx, candidate, ancestor)? {
                    return Ok(Some(candidate));
                }
            }
            Err(more_than_one(process, id))
        }
    }
}

fn more_than_one(process: &DeployedProcess, flow_scope_id: &str) -> ProcessingError {
    ProcessingError::Rejected(
        RejectionType::InvalidArgument,
        format!(
            "Expected to modify instance of process '{}' but it contains one or more activate instructions for an element that has a flow scope with more than one active instance: '{flow_scope_id}'. Can't decide in which instance of the flow scope the element should be activated. Please specify an ancestor element instance key for this activate instruction.",
            process.bpmn_process_id
        ),
    )
}

/// Whether `ancestor` is a flow scope (direct or further up) of the instance `key`.
pub(crate) fn is_ancestor_of(
    ctx: &ProcessingContext<'_, '_>,
    ancestor: i64,
    key: i64,
) -> Result<bool, ProcessingError> {
    let instances = ctx.state().element_instances();
    let mut current = instances.get(key)?;
    while let Some(instance) = current {
        let scope = instance.record().flow_scope_key;
        if scope <= 0 {
            return Ok(false);
        }
        if scope == ancestor {
            return Ok(true);
        }
        current = instances.get(scope)?;
    }
    Ok(false)
}

/// Makes an instance of the flow scope `index` in `scope_key` (the process instance itself
/// when `index` is the process): ELEMENT_ACTIVATING, its variables, ELEMENT_ACTIVATED, its
/// event subscriptions.
fn make_flow_scope(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    process: &Arc<DeployedProcess>,
    root: &ProcessInstanceRecord,
    index: ElementIndex,
    scope_key: i64,
    variables: &mut SetVariables<'_>,
) -> Result<i64, ProcessingError> {
    let (key, record) = if matches!(process.model[index].data, ElementData::Process) {
        (root.process_instance_key, root.clone())
    } else {
        let key = ctx.next_key()?;
        (key, record_of(process, root, index, scope_key))
    };
    ctx.append_event(key, PI::ElementActivating, record.clone())?;
    variables(ctx, &process.model[index].id, key)?;
    ctx.append_event(key, PI::ElementActivated, record.clone())?;
    let mut bpmn = BpmnElementContext {
        ctx,
        command,
        process: process.clone(),
        index,
        role: InstanceRole::Element,
        key,
        record,
    };
    match subscriptions::open(&mut bpmn) {
        Ok(()) => Ok(key),
        Err(Failure::Incident(_, message)) => Err(ProcessingError::Rejected(
            RejectionType::InvalidArgument,
            format!(
                "Expected to subscribe to catch event(s) of '{}' but {message}",
                process.model[index].id
            ),
        )),
        Err(Failure::Fatal(error)) => Err(error),
    }
}
