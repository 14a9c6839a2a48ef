//! `MigrateProcessInstance` → `PROCESS_INSTANCE_MIGRATION MIGRATE` on the instance's partition.
//!
//! Not available yet: the protocol crate has no `ProcessInstanceMigrationRecord` value, so
//! there is no command to send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::ProcessInstanceMigrationIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{MigrateProcessInstanceRequest, MigrateProcessInstanceResponse};
use crate::validate;

/// The partition of the instance.
pub(crate) fn check(
    request: &MigrateProcessInstanceRequest,
    partitions: u16,
) -> Result<u16, GatewayError> {
    let partition = validate::key(
        "processInstanceKey",
        request.process_instance_key,
        partitions,
    )?;
    let plan = request
        .migration_plan
        .as_ref()
        .ok_or_else(|| GatewayError::InvalidArgument("No migrationPlan provided".into()))?;
    validate::at_least(
        "migrationPlan.targetProcessDefinitionKey",
        plan.target_process_definition_key,
        1,
    )?;
    Ok(partition)
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: MigrateProcessInstanceRequest,
) -> Result<MigrateProcessInstanceResponse, GatewayError> {
    check(&request, d.partition_count())?;
    Err(GatewayError::not_built(
        "migrating process instances",
        "PROCESS_INSTANCE_MIGRATION",
        ProcessInstanceMigrationIntent::Migrate.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_required() {
        let request = MigrateProcessInstanceRequest {
            process_instance_key: beeline_protocol::key::encode(1, 9),
            migration_plan: None,
            operation_reference: None,
        };
        assert_eq!(
            check(&request, 1).unwrap_err().to_string(),
            "No migrationPlan provided"
        );
    }
}
