//! `CreateProcessInstance` → `PROCESS_INSTANCE_CREATION CREATE` on the next partition in turn
//! (the next one again while partitions shed it).

use beeline_protocol::Record;
use beeline_protocol::intent::ProcessInstanceCreationIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::{ProcessInstanceCreationRecord, StartInstruction};

use super::{operation_reference, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{CreateProcessInstanceRequest, CreateProcessInstanceResponse};
use crate::validate;

/// The creation record both creation RPCs send.
pub(crate) fn creation(
    rpc: &str,
    request: &CreateProcessInstanceRequest,
) -> Result<ProcessInstanceCreationRecord, GatewayError> {
    if request.bpmn_process_id.trim().is_empty() && request.process_definition_key <= 0 {
        return Err(GatewayError::InvalidArgument(
            "Expected either a bpmnProcessId or a processDefinitionKey, but none given".into(),
        ));
    }
    if !request.runtime_instructions.is_empty() {
        return Err(GatewayError::Unimplemented(
            "Beeline does not support runtime instructions (terminating an instance after an \
             element) yet; create the instance without runtimeInstructions"
                .into(),
        ));
    }
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = validate::tenant(rpc, &request.tenant_id)?;
    let mut start_instructions = Vec::with_capacity(request.start_instructions.len());
    for (i, instruction) in request.start_instructions.iter().enumerate() {
        validate::not_empty(
            &format!("startInstructions[{i}].elementId"),
            &instruction.element_id,
        )?;
        start_instructions.push(StartInstruction {
            element_id: instruction.element_id.clone(),
        });
    }
    Ok(ProcessInstanceCreationRecord {
        bpmn_process_id: request.bpmn_process_id.clone(),
        process_definition_key: request.process_definition_key,
        version: request.version,
        variables,
        process_instance_key: NO_KEY,
        fetch_variables: Vec::new(),
        start_instructions,
        tenant_id,
        tags: request.tags.clone(),
    })
}

pub(crate) fn command(request: &CreateProcessInstanceRequest) -> Result<Record, GatewayError> {
    let mut record = Record::command(
        NO_KEY,
        ProcessInstanceCreationIntent::Create,
        creation("CreateProcessInstance", request)?,
    );
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

pub(crate) fn response(event: &Record) -> Result<CreateProcessInstanceResponse, GatewayError> {
    let created = value_of::<ProcessInstanceCreationRecord>(event)?;
    Ok(CreateProcessInstanceResponse {
        process_definition_key: created.process_definition_key,
        bpmn_process_id: created.bpmn_process_id.clone(),
        version: created.version,
        process_instance_key: created.process_instance_key,
        tenant_id: created.tenant_id.clone(),
        tags: created.tags.clone(),
    })
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: CreateProcessInstanceRequest,
) -> Result<CreateProcessInstanceResponse, GatewayError> {
    d.require(
        ProcessInstanceCreationIntent::Create,
        "creating process instances",
    )?;
    let command = command(&request)?;
    let event = d
        .execute_anywhere(&d.new_instances, command, d.config.request_timeout)
        .await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{
        ProcessInstanceCreationRuntimeInstruction, ProcessInstanceCreationStartInstruction,
    };

    fn request() -> CreateProcessInstanceRequest {
        CreateProcessInstanceRequest {
            process_definition_key: 0,
            bpmn_process_id: "order".into(),
            version: -1,
            variables: r#"{"id":1}"#.into(),
            start_instructions: vec![ProcessInstanceCreationStartInstruction {
                element_id: "pay".into(),
            }],
            tenant_id: String::new(),
            operation_reference: Some(12),
            runtime_instructions: Vec::new(),
            tags: vec!["vip".into()],
        }
    }

    #[test]
    fn request_becomes_a_create_command() {
        let record = command(&request()).unwrap();
        assert_eq!(record.intent, ProcessInstanceCreationIntent::Create.into());
        assert_eq!(record.operation_reference, 12);
        let creation = record.value_as::<ProcessInstanceCreationRecord>().unwrap();
        assert_eq!(creation.bpmn_process_id, "order");
        assert_eq!(creation.version, -1);
        assert_eq!(creation.variables, br#"{"id":1}"#);
        assert_eq!(creation.start_instructions[0].element_id, "pay");
        assert_eq!(creation.tenant_id, "<default>");
        assert_eq!(creation.tags, vec!["vip"]);
    }

    #[test]
    fn created_event_becomes_the_response() {
        let created = ProcessInstanceCreationRecord {
            bpmn_process_id: "order".into(),
            process_definition_key: 11,
            version: 3,
            process_instance_key: 22,
            tenant_id: "<default>".into(),
            tags: vec!["vip".into()],
            ..ProcessInstanceCreationRecord::default()
        };
        let response = response(&Record::event(
            22,
            ProcessInstanceCreationIntent::Created,
            created,
        ))
        .unwrap();
        assert_eq!(
            response,
            CreateProcessInstanceResponse {
                process_definition_key: 11,
                bpmn_process_id: "order".into(),
                version: 3,
                process_instance_key: 22,
                tenant_id: "<default>".into(),
                tags: vec!["vip".into()],
            }
        );
    }

    #[test]
    fn what_cannot_be_created_is_refused() {
        let nothing = command(&CreateProcessInstanceRequest {
            bpmn_process_id: String::new(),
            ..request()
        })
        .unwrap_err();
        assert!(nothing.to_string().contains("bpmnProcessId"));
        let runtime = command(&CreateProcessInstanceRequest {
            runtime_instructions: vec![ProcessInstanceCreationRuntimeInstruction {
                instruction: None,
            }],
            ..request()
        })
        .unwrap_err();
        assert!(matches!(runtime, GatewayError::Unimplemented(_)));
        let empty_start = command(&CreateProcessInstanceRequest {
            start_instructions: vec![ProcessInstanceCreationStartInstruction {
                element_id: String::new(),
            }],
            ..request()
        })
        .unwrap_err();
        assert_eq!(
            empty_start.to_string(),
            "No startInstructions[0].elementId provided"
        );
    }
}
