use beeline_bpmn::{ElementData, ElementIndex, ElementRef};
use beeline_protocol::intent::{ProcessInstanceCreationIntent, ProcessInstanceIntent};
use beeline_protocol::value::{ProcessInstanceCreationRecord, StartInstruction};
use beeline_protocol::{Intent, Record, RejectionType, tenant_or_default};

use crate::error::ProcessingError;
use crate::model::{DeployedProcess, InstanceRole};
use crate::processing::bpmn::behavior::activation;
use crate::processing::bpmn::behavior::variables::{Document, VariableOwner, create_local};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::transient::AwaitingResult;

/// `PROCESS_INSTANCE_CREATION CREATE` (and `CREATE_WITH_AWAITING_RESULT`): finds the
/// definition (by key, or by process id and version, the latest by default), sets the
/// variables on the new instance and activates it.
pub(crate) struct ProcessInstanceCreateProcessor;

impl CommandProcessor for ProcessInstanceCreateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<ProcessInstanceCreationRecord>(command)?;
        let tenant = tenant_or_default(&request.tenant_id);
        let definition_key = if request.process_definition_key > 0 {
            request.process_definition_key
        } else if request.bpmn_process_id.is_empty() {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                "Expected at least a bpmnProcessId or a key greater than -1, but none given",
            );
            return Ok(());
        } else {
            let processes = ctx.state().processes();
            let found = if request.version < 0 {
                processes
                    .latest(tenant, &request.bpmn_process_id)?
                    .map(|(_, key)| key)
            } else {
                processes.by_version(tenant, &request.bpmn_process_id, request.version)?
            };
            match found {
                Some(key) => key,
                None => {
                    let reason = if request.version < 0 {
                        format!(
                            "Expected to find process definition with process ID '{}', but none found",
                            request.bpmn_process_id
                        )
                    } else {
                        format!(
                            "Expected to find process definition with process ID '{}' and version '{}', but none found",
                            request.bpmn_process_id, request.version
                        )
                    };
                    ctx.reject(command, RejectionType::NotFound, reason);
                    return Ok(());
                }
            }
        };
        // A definition of another tenant is not there for this command (as Zeebe looks
        // definitions up by key and tenant).
        let Some(process) = ctx
            .state()
            .processes()
            .deployed(definition_key)?
            .filter(|process| process.tenant_id == tenant)
        else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!("Expected to find process definition with key '{definition_key}', but none found"),
            );
            return Ok(());
        };
        let variables = match Document::parse(&request.variables) {
            Ok(variables) => variables,
            Err(reason) => {
                ctx.reject(
                    command,
                    RejectionType::InvalidArgument,
                    format!("Expected to set variables from document, but {reason}"),
                );
                return Ok(());
            }
        };
        if let Err(reason) = check_start_instructions(&process, &request.start_instructions) {
            ctx.reject(command, RejectionType::InvalidArgument, reason);
            return Ok(());
        }
        let start_elements: Vec<ElementIndex> = request
            .start_instructions
            .iter()
            .filter_map(|instruction| process.element(&instruction.element_id))
            .collect();
        if start_elements.is_empty()
            && process
                .model
                .root()
                .scope
                .as_ref()
                .and_then(|s| s.none_start_event)
                .is_none()
        {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                "Expected to create instance of process with none start event, but there is no such event",
            );
            return Ok(());
        }

        let instance_key = ctx.next_key()?;
        let record = super::root_record(&process, instance_key);
        create_local(ctx, instance_key, &variables, &VariableOwner::of(&record))?;
        if start_elements.is_empty() {
            ctx.append_command(instance_key, ProcessInstanceIntent::ActivateElement, record);
        } else {
            for &element in &start_elements {
                activation::activate(
                    ctx,
                    command,
                    &process,
                    &record,
                    element,
                    activation::NO_ANCESTOR,
                    &mut |_, _, _| Ok(()),
                )?;
            }
        }
        let created = ProcessInstanceCreationRecord {
            bpmn_process_id: process.bpmn_process_id.clone(),
            process_definition_key: process.key,
            version: process.version,
            variables: request.variables.clone(),
            process_instance_key: instance_key,
            fetch_variables: request.fetch_variables.clone(),
            start_instructions: request.start_instructions.clone(),
            tenant_id: process.tenant_id.clone(),
            tags: request.tags.clone(),
        };
        let event = ctx.append_event(
            instance_key,
            ProcessInstanceCreationIntent::Created,
            created,
        )?;
        if command.intent == Intent::from(ProcessInstanceCreationIntent::CreateWithAwaitingResult) {
            ctx.state().transient().await_result(
                instance_key,
                AwaitingResult {
                    request: command.position,
                    fetch_variables: request.fetch_variables.clone(),
                },
            );
            ctx.respond_later();
        } else {
            ctx.respond(event);
        }
        Ok(())
    }
}

/// Zeebe's checks of start instructions, in its order: the reason of the first that fails.
/// Start instructions may name any element a flow can reach, at any depth, but not one inside
/// a multi-instance sub-process or after an event-based gateway.
fn check_start_instructions(
    process: &DeployedProcess,
    instructions: &[StartInstruction],
) -> Result<(), String> {
    let prefix = "Expected to create instance of process with start instructions but";
    let mut elements = Vec::with_capacity(instructions.len());
    for instruction in instructions {
        let id = &instruction.element_id;
        match process.model.lookup(id) {
            Some(found) => elements.push((id, found)),
            None => return Err(format!("{prefix} no element found with id '{id}'.")),
        }
    }
    for (id, found) in &elements {
        if let ElementRef::Element(index) = found
            && activation::flow_scopes(process, *index)
                .iter()
                .any(|(_, role)| *role != InstanceRole::Element)
        {
            return Err(format!(
                "{prefix} the element with id '{id}' is inside a multi-instance subprocess. The creation of elements inside a multi-instance subprocess is not supported."
            ));
        }
    }
    for (id, found) in &elements {
        let element_type = match found {
            ElementRef::SequenceFlow(_) => Some("SEQUENCE_FLOW"),
            ElementRef::Element(index) => match process.model[*index].data {
                ElementData::StartEvent(_) => Some("START_EVENT"),
                ElementData::BoundaryEvent(_) => Some("BOUNDARY_EVENT"),
                _ => None,
            },
        };
        if let Some(element_type) = element_type {
            return Err(format!(
                "{prefix} the element with id '{id}' targets unsupported element type '{element_type}'. Supported element types are: {}",
                activation::SUPPORTED_ELEMENT_TYPES
            ));
        }
    }
    for (id, found) in &elements {
        if let ElementRef::Element(index) = found
            && activation::after_event_based_gateway(process, *index)
        {
            return Err(format!(
                "{prefix} the element with id '{id}' belongs to an event-based gateway. The creation of elements belonging to an event-based gateway is not supported."
            ));
        }
    }
    Ok(())
}
