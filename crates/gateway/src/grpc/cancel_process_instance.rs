//! `CancelProcessInstance`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::cancel_process_instance::{self, CancelProcessInstance};
use crate::proto::{CancelProcessInstanceRequest, CancelProcessInstanceResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: CancelProcessInstanceRequest,
) -> Result<CancelProcessInstanceResponse, GatewayError> {
    cancel_process_instance::run(
        d,
        CancelProcessInstance {
            process_instance_key: r.process_instance_key,
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(CancelProcessInstanceResponse {})
}
