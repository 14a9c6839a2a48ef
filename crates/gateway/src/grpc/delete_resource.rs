//! `DeleteResource`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::delete_resource::{self, DeleteResource};
use crate::proto::{DeleteResourceRequest, DeleteResourceResponse};

pub(super) async fn handle(
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
