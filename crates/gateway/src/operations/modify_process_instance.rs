//! Modify a running process instance (activate elements, terminate element instances):
//! `PROCESS_INSTANCE_MODIFICATION MODIFY` on the instance's partition, answered by MODIFIED.

use beeline_protocol::Record;
use beeline_protocol::intent::ProcessInstanceModificationIntent;
use beeline_protocol::value::{self as value, ProcessInstanceModificationRecord};

use super::{acknowledged, operation_reference};
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

/// The command, once every instruction is checked (errors name the field).
pub(crate) fn command(request: &ModifyProcessInstance) -> Result<Record, GatewayError> {
    validate::key_format("processInstanceKey", request.process_instance_key)?;
    let mut activate_instructions = Vec::with_capacity(request.activate.len());
    for (i, activate) in request.activate.iter().enumerate() {
        validate::not_empty(
            &format!("activateInstructions[{i}].elementId"),
            &activate.element_id,
        )?;
        let mut variable_instructions = Vec::with_capacity(activate.variables.len());
        for (j, variables) in activate.variables.iter().enumerate() {
            variable_instructions.push(value::VariableInstruction {
                variables: validate::variables(
                    &format!("activateInstructions[{i}].variableInstructions[{j}].variables"),
                    &variables.variables,
                )?,
                element_id: variables.scope_id.clone(),
            });
        }
        activate_instructions.push(value::ActivateInstruction {
            element_id: activate.element_id.clone(),
            ancestor_scope_key: match activate.ancestor_element_instance_key {
                key if key > 0 => key,
                _ => -1,
            },
            variable_instructions,
            ancestor_scope_keys: Vec::new(),
        });
    }
    let terminate_instructions = request
        .terminate
        .iter()
        .map(|&key| value::TerminateInstruction {
            element_instance_key: key,
        })
        .collect();
    let mut record = Record::command(
        request.process_instance_key,
        ProcessInstanceModificationIntent::Modify,
        ProcessInstanceModificationRecord {
            process_instance_key: request.process_instance_key,
            activate_instructions,
            terminate_instructions,
            ..Default::default()
        },
    );
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

pub async fn run(d: &Dispatcher, request: ModifyProcessInstance) -> Result<(), GatewayError> {
    d.require(
        ProcessInstanceModificationIntent::Modify,
        "modifying process instances",
    )?;
    let command = command(&request)?;
    acknowledged::<ProcessInstanceModificationRecord>(
        d,
        "processInstanceKey",
        request.process_instance_key,
        command,
    )
    .await
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
        let error = command(&request).unwrap_err().to_string();
        assert!(
            error.contains("'activateInstructions[0].variableInstructions[0].variables'"),
            "{error}"
        );
    }

    #[test]
    fn request_becomes_a_modify_command() {
        let key = beeline_protocol::key::encode(1, 9);
        let record = command(&ModifyProcessInstance {
            process_instance_key: key,
            activate: vec![ActivateInstruction {
                element_id: "task".into(),
                ancestor_element_instance_key: -1,
                variables: vec![VariableInstruction {
                    variables: r#"{"a":1}"#.into(),
                    scope_id: "sub".into(),
                }],
            }],
            terminate: vec![key + 1],
            operation_reference: Some(3),
        })
        .unwrap();
        assert_eq!(record.key, key);
        assert_eq!(record.operation_reference, 3);
        let value = record
            .value_as::<ProcessInstanceModificationRecord>()
            .unwrap();
        assert_eq!(value.process_instance_key, key);
        assert_eq!(value.activate_instructions[0].element_id, "task");
        assert_eq!(value.activate_instructions[0].ancestor_scope_key, -1);
        assert_eq!(
            value.activate_instructions[0].variable_instructions[0].element_id,
            "sub"
        );
        assert_eq!(
            value.terminate_instructions[0].element_instance_key,
            key + 1
        );
    }
}
