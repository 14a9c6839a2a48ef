use beeline_bpmn::ElementIndex;
use beeline_protocol::intent::{ProcessInstanceCreationIntent, ProcessInstanceIntent};
use beeline_protocol::value::{ProcessInstanceCreationRecord, ProcessInstanceRecord};
use beeline_protocol::{Intent, Record, RejectionType};

use crate::error::ProcessingError;
use crate::model::element_types;
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
                    .latest(&request.bpmn_process_id)?
                    .map(|(_, key)| key)
            } else {
                processes.by_version(&request.bpmn_process_id, request.version)?
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
        let Some(process) = ctx.state().processes().deployed(definition_key)? else {
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
        let mut start_elements: Vec<ElementIndex> = Vec::new();
        for instruction in &request.start_instructions {
            match process.element(&instruction.element_id) {
                Some(index)
                    if process.model.scope_of(index).map(|s| s.id.as_str())
                        == Some(process.model.root().id.as_str()) =>
                {
                    start_elements.push(index)
                }
                Some(_) => {
                    ctx.reject(
                        command,
                        RejectionType::InvalidArgument,
                        format!(
                            "Expected to create instance of process with start instructions but the element with id '{}' is not a direct child of the process; starting inside a sub-process is not supported yet",
                            instruction.element_id
                        ),
                    );
                    return Ok(());
                }
                None => {
                    ctx.reject(
                        command,
                        RejectionType::InvalidArgument,
                        format!(
                            "Expected to create instance of process with start instructions but no element found with id '{}'.",
                            instruction.element_id
                        ),
                    );
                    return Ok(());
                }
            }
        }
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
            activate_at(ctx, instance_key, record, &process.model, &start_elements)?;
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

/// Start instructions: the process is activated without its start event, and the given
/// elements inside it are activated directly.
fn activate_at(
    ctx: &mut ProcessingContext<'_, '_>,
    instance_key: i64,
    record: ProcessInstanceRecord,
    model: &beeline_bpmn::Process,
    elements: &[ElementIndex],
) -> Result<(), ProcessingError> {
    ctx.append_event(
        instance_key,
        ProcessInstanceIntent::ElementActivating,
        record.clone(),
    )?;
    ctx.append_event(
        instance_key,
        ProcessInstanceIntent::ElementActivated,
        record.clone(),
    )?;
    for &index in elements {
        let element = &model[index];
        let (element_type, event_type) = element_types(element);
        let key = ctx.next_key()?;
        ctx.append_command(
            key,
            ProcessInstanceIntent::ActivateElement,
            ProcessInstanceRecord {
                element_id: element.id.clone(),
                flow_scope_key: instance_key,
                bpmn_element_type: element_type.to_string(),
                bpmn_event_type: event_type.to_string(),
                ..record.clone()
            },
        );
    }
    Ok(())
}
