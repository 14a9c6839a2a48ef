use std::collections::HashSet;

use beeline_bpmn::{ElementData, ElementIndex, ElementRef};
use beeline_protocol::intent::ProcessInstanceModificationIntent;
use beeline_protocol::value::{ActivateInstruction, ProcessInstanceModificationRecord};
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::model::{DeployedProcess, deployed};
use crate::processing::bpmn::behavior::activation::{
    self, NO_ANCESTOR, SUPPORTED_ELEMENT_TYPES, after_event_based_gateway,
};
use crate::processing::bpmn::behavior::termination::{is_empty, terminate_at_once};
use crate::processing::bpmn::behavior::variables::{Document, VariableOwner, merge_local};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::ElementLifecycle;

/// `PROCESS_INSTANCE_MODIFICATION MODIFY`: activates elements (in the flow scope instances the
/// instructions select, made where missing), then terminates element instances, and with them
/// the flow scopes left empty that no activation needs. All or nothing: any instruction that
/// may not run rejects the whole command, and nothing is changed.
pub(crate) struct ProcessInstanceModificationModifyProcessor;

impl CommandProcessor for ProcessInstanceModificationModifyProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<ProcessInstanceModificationRecord>(command)?.clone();
        let instance_key = request.process_instance_key;
        let event_key = if command.key > 0 {
            command.key
        } else {
            instance_key
        };
        let root = ctx
            .state()
            .element_instances()
            .get(instance_key)?
            .filter(|instance| {
                // An instance of a tenant the caller may not act for is not there for it.
                let record = instance.record();
                record.flow_scope_key <= 0 && command.is_authorized_for(&record.tenant_id)
            });
        let Some(root) = root else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to modify process instance but no process instance found with key '{event_key}'"
                ),
            );
            return Ok(());
        };
        let root_record = root.record();
        let process = deployed(ctx.state(), &root_record)?;
        if let Err(reason) = validate(ctx, &process, &request) {
            ctx.reject(command, RejectionType::InvalidArgument, reason);
            return Ok(());
        }

        let owner = VariableOwner::of(&root_record);
        let mut modified = ProcessInstanceModificationRecord {
            process_instance_key: instance_key,
            tenant_id: root_record.tenant_id.clone(),
            terminate_instructions: request.terminate_instructions.clone(),
            ..Default::default()
        };
        let mut required: HashSet<i64> = HashSet::new();
        for instruction in &request.activate_instructions {
            let target = process.element(&instruction.element_id).ok_or_else(|| {
                ProcessingError::Internal(format!(
                    "element '{}' was checked to exist",
                    instruction.element_id
                ))
            })?;
            let ancestor = match instruction.ancestor_scope_key {
                key if key > 0 => key,
                _ => NO_ANCESTOR,
            };
            let process_id = process.bpmn_process_id.clone();
            let mut set_variables =
                |ctx: &mut ProcessingContext<'_, '_>, element_id: &str, scope: i64| {
                    for variables in &instruction.variable_instructions {
                        let applies = variables.element_id == element_id
                            || (variables.element_id.is_empty() && element_id == process_id);
                        if !applies {
                            continue;
                        }
                        let document = Document::parse(&variables.variables).map_err(|reason| {
                            ProcessingError::Rejected(
                                RejectionType::InvalidArgument,
                                format!("Expected to set variables from document, but {reason}"),
                            )
                        })?;
                        merge_local(ctx, scope, &document, &owner)?;
                    }
                    Ok(())
                };
            let activated = activation::activate(
                ctx,
                command,
                &process,
                &root_record,
                target,
                ancestor,
                &mut set_variables,
            )?;
            for &key in &activated.flow_scope_keys {
                if required.insert(key) {
                    modified.ancestor_scope_keys.push(key);
                }
            }
            modified.activate_instructions.push(ActivateInstruction {
                ancestor_scope_keys: activated.flow_scope_keys,
                ..instruction.clone()
            });
        }
        for instruction in &request.terminate_instructions {
            let Some(instance) = ctx
                .state()
                .element_instances()
                .get(instruction.element_instance_key)?
            else {
                // Terminated already, inside an instance an earlier instruction terminated.
                continue;
            };
            let flow_scope = instance.record().flow_scope_key;
            terminate_at_once(ctx, command, instance)?;
            terminate_emptied_flow_scopes(ctx, command, flow_scope, &required)?;
        }
        let event = ctx.append_event(
            event_key,
            ProcessInstanceModificationIntent::Modified,
            modified,
        )?;
        ctx.respond(event);
        Ok(())
    }
}

/// Terminates the flow scope `key` if nothing is left in it and no activation needs it, and
/// so on up. Terminating the whole of a process instance a call activity created is refused:
/// its parent decides about it.
fn terminate_emptied_flow_scopes(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    key: i64,
    required: &HashSet<i64>,
) -> Result<(), ProcessingError> {
    let mut current = ctx.state().element_instances().get(key)?;
    while let Some(instance) = current {
        if !is_empty(&instance) || required.contains(&instance.key) {
            break;
        }
        let record = instance.record();
        if record.flow_scope_key <= 0 && record.parent_element_instance_key > 0 {
            return Err(ProcessingError::Rejected(
                RejectionType::InvalidArgument,
                format!(
                    "Expected to modify instance of process '{}' but the given instructions would terminate the instance. The instance was created by a call activity in the parent process. To terminate this instance please modify the parent process instead.",
                    record.bpmn_process_id
                ),
            ));
        }
        terminate_at_once(ctx, command, instance)?;
        current = ctx.state().element_instances().get(record.flow_scope_key)?;
    }
    Ok(())
}

/// Zeebe's checks, in its order; the reason of the first that fails.
fn validate(
    ctx: &ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    request: &ProcessInstanceModificationRecord,
) -> Result<(), String> {
    let process_id = &process.bpmn_process_id;
    let activations = &request.activate_instructions;
    let prefix = format!(
        "Expected to modify instance of process '{process_id}' but it contains one or more"
    );

    let unknown = distinct(
        activations
            .iter()
            .map(|a| a.element_id.as_str())
            .filter(|id| process.model.lookup(id).is_none()),
    );
    if !unknown.is_empty() {
        return Err(format!(
            "{prefix} activate instructions with an element that could not be found: '{}'",
            unknown.join("', '")
        ));
    }
    let after_event_gateway = distinct(activations.iter().map(|a| a.element_id.as_str()).filter(
        |id| {
            process
                .element(id)
                .is_some_and(|i| after_event_based_gateway(process, i))
        },
    ));
    if !after_event_gateway.is_empty() {
        return Err(format!(
            "{prefix} activate instructions for elements that are unsupported: '{}'. The activation of events belonging to an event-based gateway is not supported.",
            after_event_gateway.join("', '")
        ));
    }
    let unsupported: Vec<(&str, &str)> =
        distinct(activations.iter().map(|a| a.element_id.as_str()))
            .into_iter()
            .filter_map(|id| {
                let element_type = match process.model.lookup(id)? {
                    ElementRef::SequenceFlow(_) => "SEQUENCE_FLOW",
                    ElementRef::Element(index) => match process.model[index].data {
                        ElementData::StartEvent(_) => "START_EVENT",
                        ElementData::BoundaryEvent(_) => "BOUNDARY_EVENT",
                        _ => return None,
                    },
                };
                Some((id, element_type))
            })
            .collect();
    if !unsupported.is_empty() {
        let ids: Vec<&str> = unsupported.iter().map(|(id, _)| *id).collect();
        let types = distinct(unsupported.iter().map(|(_, t)| *t));
        return Err(format!(
            "{prefix} activate instructions for elements that are unsupported: '{}'. The activation of elements with type '{}' is not supported. Supported element types are: {SUPPORTED_ELEMENT_TYPES}.",
            ids.join("', '"),
            types.join("', '")
        ));
    }

    let instances = ctx.state().element_instances();
    let mut unknown_instances = Vec::new();
    for instruction in &request.terminate_instructions {
        let key = instruction.element_instance_key;
        let found = instances
            .get(key)
            .map_err(|e| e.to_string())?
            .is_some_and(|i| i.record().process_instance_key == request.process_instance_key);
        if !found && !unknown_instances.contains(&key) {
            unknown_instances.push(key);
        }
    }
    if !unknown_instances.is_empty() {
        let keys: Vec<String> = unknown_instances.iter().map(i64::to_string).collect();
        return Err(format!(
            "{prefix} terminate instructions with an element instance that could not be found: '{}'",
            keys.join("', '")
        ));
    }

    let unknown_scopes = distinct(
        activations
            .iter()
            .flat_map(|a| a.variable_instructions.iter())
            .map(|v| v.element_id.as_str())
            .filter(|id| !id.is_empty() && process.element(id).is_none()),
    );
    if !unknown_scopes.is_empty() {
        return Err(format!(
            "{prefix} variable instructions with a scope element id that could not be found: '{}'",
            unknown_scopes.join("', '")
        ));
    }
    let not_flow_scope = activations.iter().any(|a| {
        let Some(target) = process.element(&a.element_id) else {
            return false;
        };
        a.variable_instructions.iter().any(|v| {
            !v.element_id.is_empty()
                && v.element_id != a.element_id
                && !is_flow_scope_of(process, target, &v.element_id)
        })
    });
    if not_flow_scope {
        return Err(format!(
            "{prefix} variable instructions with a scope element that doesn't belong to the activating element's flow scope. These variables should be set before or after the modification."
        ));
    }

    validate_ancestors(ctx, process, request, &prefix)?;
    validate_not_activated_in_terminated_scope(ctx, process, request, process_id)
}

fn validate_ancestors(
    ctx: &ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    request: &ProcessInstanceModificationRecord,
    prefix: &str,
) -> Result<(), String> {
    let instances = ctx.state().element_instances();
    let selected = distinct(
        request
            .activate_instructions
            .iter()
            .map(|a| a.ancestor_scope_key)
            .filter(|&key| key > 0),
    );
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for key in selected {
        match instances.get(key).map_err(|e| e.to_string())? {
            Some(instance)
                if instance.is(ElementLifecycle::Activated)
                    || instance.is(ElementLifecycle::Activating) =>
            {
                found.push(instance)
            }
            _ => missing.push(key.to_string()),
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "{prefix} activate instructions with an ancestor scope key that does not exist, or is not in an active state: '{}'",
            missing.join("', '")
        ));
    }
    let foreign: Vec<String> = found
        .iter()
        .filter(|i| i.record().process_instance_key != request.process_instance_key)
        .map(|i| i.key.to_string())
        .collect();
    if !foreign.is_empty() {
        return Err(format!(
            "{prefix} activate instructions with an ancestor scope key that does not belong to the modified process instance: '{}'",
            foreign.join("', '")
        ));
    }
    let mut not_ancestors = String::new();
    for instruction in &request.activate_instructions {
        let Some(ancestor) = found
            .iter()
            .find(|i| i.key == instruction.ancestor_scope_key)
        else {
            continue;
        };
        let ancestor_id = ancestor.record().element_id;
        let is_ancestor = process
            .element(&instruction.element_id)
            .is_some_and(|target| is_flow_scope_of(process, target, &ancestor_id));
        if !is_ancestor {
            not_ancestors.push_str(&format!(
                "\n- instance '{}' of element '{ancestor_id}' is not an ancestor of element '{}'",
                instruction.ancestor_scope_key, instruction.element_id
            ));
        }
    }
    if !not_ancestors.is_empty() {
        return Err(format!(
            "{prefix} activate instructions with an ancestor scope key that is not an ancestor of the element to activate:{not_ancestors}"
        ));
    }
    Ok(())
}

/// An activation may not need a flow scope instance that a terminate instruction ends.
fn validate_not_activated_in_terminated_scope(
    ctx: &ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    request: &ProcessInstanceModificationRecord,
    process_id: &str,
) -> Result<(), String> {
    let instances = ctx.state().element_instances();
    let mut conflicts = Vec::new();
    let terminated = distinct(
        request
            .terminate_instructions
            .iter()
            .map(|t| t.element_instance_key),
    );
    for key in terminated {
        let Some(instance) = instances.get(key).map_err(|e| e.to_string())? else {
            continue;
        };
        let terminated_id = instance.record().element_id;
        for activation in &request.activate_instructions {
            let conflict = if activation.ancestor_scope_key > 0 {
                activation.ancestor_scope_key == key
            } else {
                process
                    .element(&activation.element_id)
                    .is_some_and(|target| is_flow_scope_of(process, target, &terminated_id))
            };
            if conflict {
                conflicts.push(format!(
                    "element '{}' requires flow scope instance '{key}' which is being terminated",
                    activation.element_id
                ));
            }
        }
    }
    if conflicts.is_empty() {
        return Ok(());
    }
    Err(format!(
        "Expected to modify instance of process '{process_id}' but it contains one or more activate instructions for elements whose required flow scope instance is also being terminated: {}. Please provide a valid ancestor scope key for the activation or avoid terminating the required flow scope.",
        conflicts.join(", ")
    ))
}

/// Whether the element `id` is a flow scope of `element` (its parent, or further up).
fn is_flow_scope_of(process: &DeployedProcess, element: ElementIndex, id: &str) -> bool {
    let mut current = process.model[element].parent;
    while let Some(index) = current {
        if process.model[index].id == id {
            return true;
        }
        current = process.model[index].parent;
    }
    false
}

/// The items in the order they first come, each once.
fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}
