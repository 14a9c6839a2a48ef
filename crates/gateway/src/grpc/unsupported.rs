//! `MigrateProcessInstance`: checked, then answered UNIMPLEMENTED until the engine has its
//! command.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::migrate_process_instance::{self, MigrateProcessInstance, MigrationPlan};
use crate::proto::{MigrateProcessInstanceRequest, MigrateProcessInstanceResponse};

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
