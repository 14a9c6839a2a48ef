//! `DeleteResource` → `RESOURCE_DELETION DELETE` on the partition of the resource's key.
//!
//! Not available yet: the protocol crate has no `ResourceDeletionRecord` value, so there is no
//! command to send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::ResourceDeletionIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{DeleteResourceRequest, DeleteResourceResponse};
use crate::validate;

/// The partition of the resource.
pub(crate) fn check(request: &DeleteResourceRequest, partitions: u16) -> Result<u16, GatewayError> {
    validate::key("resourceKey", request.resource_key, partitions)
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: DeleteResourceRequest,
) -> Result<DeleteResourceResponse, GatewayError> {
    check(&request, d.partition_count())?;
    Err(GatewayError::not_built(
        "deleting resources",
        "RESOURCE_DELETION",
        ResourceDeletionIntent::Delete.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_names_the_partition() {
        let key = beeline_protocol::key::encode(1, 3);
        let request = DeleteResourceRequest {
            resource_key: key,
            operation_reference: None,
        };
        assert_eq!(check(&request, 1).unwrap(), 1);
        assert!(
            check(
                &DeleteResourceRequest {
                    resource_key: -1,
                    ..request
                },
                1
            )
            .is_err()
        );
    }
}
