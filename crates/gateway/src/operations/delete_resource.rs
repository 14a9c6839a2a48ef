//! Delete a deployed resource (a process definition, a decision requirements graph with its
//! decisions, a form): `RESOURCE_DELETION DELETE` on the partition that deployed it (the one
//! in its key), answered by DELETING; that partition deletes it on every other partition.

use beeline_protocol::Record;
use beeline_protocol::intent::ResourceDeletionIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::ResourceDeletionRecord;

use super::{acknowledged, operation_reference};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeleteResource {
    pub resource_key: i64,
    pub operation_reference: Option<u64>,
}

pub(crate) fn command(request: &DeleteResource) -> Record {
    // No key: a command with one is a deletion distributed by another partition.
    let mut record = Record::command(
        NO_KEY,
        ResourceDeletionIntent::Delete,
        ResourceDeletionRecord {
            resource_key: request.resource_key,
            ..Default::default()
        },
    );
    record.operation_reference = operation_reference(request.operation_reference);
    record
}

pub async fn run(d: &Dispatcher, request: DeleteResource) -> Result<(), GatewayError> {
    d.require(ResourceDeletionIntent::Delete, "deleting resources")?;
    acknowledged::<ResourceDeletionRecord>(
        d,
        "resourceKey",
        request.resource_key,
        command(&request),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_delete_command_without_a_key() {
        let record = command(&DeleteResource {
            resource_key: 2_251_799_813_685_249,
            operation_reference: Some(4),
        });
        assert_eq!(record.key, NO_KEY);
        assert_eq!(record.intent, ResourceDeletionIntent::Delete.into());
        assert_eq!(record.operation_reference, 4);
        let value = record.value_as::<ResourceDeletionRecord>().unwrap();
        assert_eq!(value.resource_key, 2_251_799_813_685_249);
    }
}
