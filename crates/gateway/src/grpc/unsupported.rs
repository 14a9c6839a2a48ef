//! `DeleteResource`, `ModifyProcessInstance` and `MigrateProcessInstance`: checked, then
//! answered UNIMPLEMENTED until the engine has their commands.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::delete_resource::{self, DeleteResource};
use crate::operations::migrate_process_instance::{self, MigrateProcessInstance, MigrationPlan};
use crate::operations::modify_process_instance::{
    self, ActivateInstruction, ModifyProcessInstance, VariableInstruction,
};
use crate::proto::{
    DeleteResourceRequest, DeleteResourceResponse, MigrateProcessInstanceRequest,
    MigrateProcessInstanceResponse, ModifyProcessInstanceRequest, ModifyProcessInstanceResponse,
};

pub(super) async fn delete_resource(
    d: &Dispatcher,
    r: DeleteResourceRequest,
) -> Result<DeleteResourceResponse, GatewayError> {
    delete_resource::run(
        d,
        DeleteResource {
            resource_key: r.resource_key,
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(DeleteResourceResponse {})
}

pub(super) async fn modify_process_instance(
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

pub(super) async fn migrate_process_instance(
    d: &Dispatcher,
    r: MigrateProcessInstanceRequest,
) -> Result<MigrateProcessInstanceResponse, GatewayError> {
    migrate_process_instance::run(
        d,
        MigrateProcessInstance {
            process_instance_key: r.process_instance_key,
            plan: r.migration_plan.map(|plan| MigrationPlan {
                target_process_definition_key: plan.target_process_definition_key,
                mappings: plan
                    .mapping_instructions
                    .into_iter()
                    .map(|m| (m.source_element_id, m.target_element_id))
                    .collect(),
            }),
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(MigrateProcessInstanceResponse {})
}
