//! `DeleteResource` and `MigrateProcessInstance`: checked, then
//! answered UNIMPLEMENTED until the engine has their commands.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::delete_resource::{self, DeleteResource};
use crate::operations::migrate_process_instance::{self, MigrateProcessInstance, MigrationPlan};
use crate::proto::{
    DeleteResourceRequest, DeleteResourceResponse, MigrateProcessInstanceRequest,
    MigrateProcessInstanceResponse,
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
