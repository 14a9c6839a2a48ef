//! `ModifyProcessInstance`: activate elements and terminate element instances of a running
//! instance, all or nothing.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::modify_process_instance::{
    self, ActivateInstruction, ModifyProcessInstance, VariableInstruction,
};
use crate::proto::{ModifyProcessInstanceRequest, ModifyProcessInstanceResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: ModifyProcessInstanceRequest,
) -> Result<ModifyProcessInstanceResponse, GatewayError> {
    modify_process_instance::run(
        d,
        ModifyProcessInstance {
            process_instance_key: r.process_instance_key,
            activate: r
                .activate_instructions
                .into_iter()
                .map(|a| ActivateInstruction {
                    element_id: a.element_id,
                    ancestor_element_instance_key: a.ancestor_element_instance_key,
                    variables: a
                        .variable_instructions
                        .into_iter()
                        .map(|v| VariableInstruction {
                            variables: v.variables,
                            scope_id: v.scope_id,
                        })
                        .collect(),
                })
                .collect(),
            terminate: r
                .terminate_instructions
                .into_iter()
                .map(|t| t.element_instance_key)
                .collect(),
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(ModifyProcessInstanceResponse {})
}
