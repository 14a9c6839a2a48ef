//! Delete a deployed resource: `RESOURCE_DELETION DELETE` on the partition of its key.
//!
//! Not available yet: the protocol crate has no `ResourceDeletionRecord` value, so there is no
//! command to send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::ResourceDeletionIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeleteResource {
    pub resource_key: i64,
    pub operation_reference: Option<u64>,
}

pub async fn run(d: &Dispatcher, request: DeleteResource) -> Result<(), GatewayError> {
    validate::key("resourceKey", request.resource_key, d.partition_count())?;
    Err(GatewayError::not_built(
        "deleting resources",
        "RESOURCE_DELETION",
        ResourceDeletionIntent::Delete.into(),
    ))
}
