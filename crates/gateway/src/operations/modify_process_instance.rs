//! Modify a running process instance (activate elements, terminate element instances):
//! `PROCESS_INSTANCE_MODIFICATION MODIFY` on the instance's partition.
//!
//! Not available yet: the protocol crate has no `ProcessInstanceModificationRecord` value, so
//! there is no command to send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::ProcessInstanceModificationIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModifyProcessInstance {
    pub process_instance_key: i64,
    pub activate: Vec<ActivateInstruction>,
    /// Element instances to terminate.
    pub terminate: Vec<i64>,
    pub operation_reference: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivateInstruction {
    pub element_id: String,
    /// The flow scope instance to activate in (-1: the engine chooses).
    pub ancestor_element_instance_key: i64,
    pub variables: Vec<VariableInstruction>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct VariableInstruction {
    /// A JSON object as text.
    pub variables: String,
    /// The element whose scope gets the variables (empty: the activated element's flow scope).
    pub scope_id: String,
}

/// The partition of the instance, once every instruction is checked.
pub(crate) fn check(request: &ModifyProcessInstance, partitions: u16) -> Result<u16, GatewayError> {
    let partition = validate::key(
        "processInstanceKey",
        request.process_instance_key,
        partitions,
    )?;
    for (i, activate) in request.activate.iter().enumerate() {
        validate::not_empty(
            &format!("activateInstructions[{i}].elementId"),
            &activate.element_id,
        )?;
        for (j, variables) in activate.variables.iter().enumerate() {
            validate::variables(
                &format!("activateInstructions[{i}].variableInstructions[{j}].variables"),
                &variables.variables,
            )?;
        }
    }
    Ok(partition)
}

pub async fn run(d: &Dispatcher, request: ModifyProcessInstance) -> Result<(), GatewayError> {
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

    #[test]
    fn instructions_are_checked_field_by_field() {
        let request = ModifyProcessInstance {
            process_instance_key: beeline_protocol::key::encode(1, 9),
            activate: vec![ActivateInstruction {
                element_id: "task".into(),
                ancestor_element_instance_key: -1,
                variables: vec![VariableInstruction {
                    variables: "[1]".into(),
                    scope_id: String::new(),
                }],
            }],
            ..ModifyProcessInstance::default()
        };
        let error = check(&request, 1).unwrap_err().to_string();
        assert!(
            error.contains("'activateInstructions[0].variableInstructions[0].variables'"),
            "{error}"
        );
    }
}
