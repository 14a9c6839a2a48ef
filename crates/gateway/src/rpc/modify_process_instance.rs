//! `ModifyProcessInstance` → `PROCESS_INSTANCE_MODIFICATION MODIFY` on the instance's partition.
//!
//! Not available yet: the protocol crate has no `ProcessInstanceModificationRecord` value, so
//! there is no command to send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::ProcessInstanceModificationIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{ModifyProcessInstanceRequest, ModifyProcessInstanceResponse};
use crate::validate;

/// The partition of the instance.
pub(crate) fn check(
    request: &ModifyProcessInstanceRequest,
    partitions: u16,
) -> Result<u16, GatewayError> {
    let partition = validate::key(
        "processInstanceKey",
        request.process_instance_key,
        partitions,
    )?;
    for (i, activate) in request.activate_instructions.iter().enumerate() {
        validate::not_empty(
            &format!("activateInstructions[{i}].elementId"),
            &activate.element_id,
        )?;
        for (j, variables) in activate.variable_instructions.iter().enumerate() {
            validate::variables(
                &format!("activateInstructions[{i}].variableInstructions[{j}].variables"),
                &variables.variables,
            )?;
        }
    }
    Ok(partition)
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: ModifyProcessInstanceRequest,
) -> Result<ModifyProcessInstanceResponse, GatewayError> {
    check(&request, d.partition_count())?;
    Err(GatewayError::not_built(
        "modifying process instances",
        "PROCESS_INSTANCE_MODIFICATION",
        ProcessInstanceModificationIntent::Modify.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::modify_process_instance_request::{ActivateInstruction, VariableInstruction};

    #[test]
    fn instructions_are_checked_field_by_field() {
        let request = ModifyProcessInstanceRequest {
            process_instance_key: beeline_protocol::key::encode(1, 9),
            activate_instructions: vec![ActivateInstruction {
                element_id: "task".into(),
                ancestor_element_instance_key: -1,
                variable_instructions: vec![VariableInstruction {
                    variables: "[1]".into(),
                    scope_id: String::new(),
                }],
            }],
            terminate_instructions: Vec::new(),
            operation_reference: None,
        };
        let error = check(&request, 1).unwrap_err().to_string();
        assert!(
            error.contains("'activateInstructions[0].variableInstructions[0].variables'"),
            "{error}"
        );
    }
}
