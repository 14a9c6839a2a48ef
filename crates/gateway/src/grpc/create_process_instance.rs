//! `CreateProcessInstance` and `CreateProcessInstanceWithResult`.

use std::time::Duration;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::create_process_instance::{
    self, AwaitResult, CreateProcessInstance, ProcessSelector,
};
use crate::operations::document_text;
use crate::proto::process_instance_creation_runtime_instruction::Instruction;
use crate::proto::{
    CreateProcessInstanceRequest, CreateProcessInstanceResponse,
    CreateProcessInstanceWithResultRequest, CreateProcessInstanceWithResultResponse,
};

/// The process by key when one is given, else by BPMN process id (and version).
pub(crate) fn request(
    r: CreateProcessInstanceRequest,
) -> Result<CreateProcessInstance, GatewayError> {
    let process = if r.process_definition_key > 0 {
        ProcessSelector::Key(r.process_definition_key)
    } else if !r.bpmn_process_id.trim().is_empty() {
        ProcessSelector::Id {
            process_id: r.bpmn_process_id,
            version: r.version,
        }
    } else {
        return Err(GatewayError::InvalidArgument(
            "Expected either a bpmnProcessId or a processDefinitionKey, but none given".into(),
        ));
    };
    Ok(CreateProcessInstance {
        process,
        variables: r.variables,
        start_instructions: r
            .start_instructions
            .into_iter()
            .map(|s| s.element_id)
            .collect(),
        runtime_instructions: r
            .runtime_instructions
            .into_iter()
            .map(|runtime| match runtime.instruction {
                Some(Instruction::Terminate(terminate)) => terminate.after_element_id,
                None => String::new(),
            })
            .collect(),
        tenant_id: r.tenant_id,
        tags: r.tags,
        operation_reference: r.operation_reference,
    })
}

pub(super) async fn handle(
    d: &Dispatcher,
    r: CreateProcessInstanceRequest,
) -> Result<CreateProcessInstanceResponse, GatewayError> {
    let created = create_process_instance::run(d, request(r)?).await?.value;
    Ok(CreateProcessInstanceResponse {
        process_definition_key: created.process_definition_key,
        bpmn_process_id: created.bpmn_process_id,
        version: created.version,
        process_instance_key: created.process_instance_key,
        tenant_id: created.tenant_id,
        tags: created.tags,
    })
}

pub(super) async fn handle_with_result(
    d: &Dispatcher,
    r: CreateProcessInstanceWithResultRequest,
) -> Result<CreateProcessInstanceWithResultResponse, GatewayError> {
    let inner = r
        .request
        .ok_or_else(|| GatewayError::InvalidArgument("No request provided".into()))?;
    let wait = AwaitResult {
        fetch_variables: r.fetch_variables,
        timeout: u64::try_from(r.request_timeout)
            .ok()
            .map(Duration::from_millis),
    };
    let result = create_process_instance::run_awaiting(d, request(inner)?, wait).await?;
    Ok(CreateProcessInstanceWithResultResponse {
        process_definition_key: result.process_definition_key,
        bpmn_process_id: result.bpmn_process_id,
        version: result.version,
        process_instance_key: result.process_instance_key,
        variables: document_text(&result.variables).to_owned(),
        tenant_id: result.tenant_id,
        tags: result.tags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::ProcessInstanceCreationRuntimeInstruction;

    #[test]
    fn the_key_wins_over_the_id() {
        let by_key = request(CreateProcessInstanceRequest {
            process_definition_key: 5,
            bpmn_process_id: "order".into(),
            ..CreateProcessInstanceRequest::default()
        })
        .unwrap();
        assert_eq!(by_key.process, ProcessSelector::Key(5));
        let by_id = request(CreateProcessInstanceRequest {
            bpmn_process_id: "order".into(),
            version: 3,
            ..CreateProcessInstanceRequest::default()
        })
        .unwrap();
        assert_eq!(
            by_id.process,
            ProcessSelector::Id {
                process_id: "order".into(),
                version: 3
            }
        );
        let none = request(CreateProcessInstanceRequest::default()).unwrap_err();
        assert!(none.to_string().contains("bpmnProcessId"));
    }

    #[test]
    fn runtime_instructions_are_passed_on_to_be_refused() {
        let with = request(CreateProcessInstanceRequest {
            bpmn_process_id: "order".into(),
            runtime_instructions: vec![ProcessInstanceCreationRuntimeInstruction {
                instruction: None,
            }],
            ..CreateProcessInstanceRequest::default()
        })
        .unwrap();
        assert_eq!(with.runtime_instructions.len(), 1);
    }
}
