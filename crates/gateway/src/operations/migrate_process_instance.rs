//! Migrate a running process instance to another process definition:
//! `PROCESS_INSTANCE_MIGRATION MIGRATE` on the instance's partition.
//!
//! Not available yet: the protocol crate has no `ProcessInstanceMigrationRecord` value, so
//! there is no command to send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::ProcessInstanceMigrationIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MigrateProcessInstance {
    pub process_instance_key: i64,
    pub plan: Option<MigrationPlan>,
    pub operation_reference: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MigrationPlan {
    pub target_process_definition_key: i64,
    /// (source element id, target element id)
    pub mappings: Vec<(String, String)>,
}

/// The partition of the instance, once the plan is checked.
pub(crate) fn check(
    request: &MigrateProcessInstance,
    partitions: u16,
) -> Result<u16, GatewayError> {
    let partition = validate::key(
        "processInstanceKey",
        request.process_instance_key,
        partitions,
    )?;
    let plan = request
        .plan
        .as_ref()
        .ok_or_else(|| GatewayError::InvalidArgument("No migrationPlan provided".into()))?;
    validate::at_least(
        "migrationPlan.targetProcessDefinitionKey",
        plan.target_process_definition_key,
        1,
    )?;
    Ok(partition)
}

pub async fn run(d: &Dispatcher, request: MigrateProcessInstance) -> Result<(), GatewayError> {
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
        let request = MigrateProcessInstance {
            process_instance_key: beeline_protocol::key::encode(1, 9),
            ..MigrateProcessInstance::default()
        };
        assert_eq!(
            check(&request, 1).unwrap_err().to_string(),
            "No migrationPlan provided"
        );
    }
}
