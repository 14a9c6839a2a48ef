//! `SetVariables`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::set_variables::{self, SetVariables};
use crate::proto::{SetVariablesRequest, SetVariablesResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: SetVariablesRequest,
) -> Result<SetVariablesResponse, GatewayError> {
    let key = set_variables::run(
        d,
        SetVariables {
            element_instance_key: r.element_instance_key,
            variables: r.variables,
            local: r.local,
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(SetVariablesResponse { key })
}
