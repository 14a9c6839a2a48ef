//! `ThrowError`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::throw_error::{self, ThrowError};
use crate::proto::{ThrowErrorRequest, ThrowErrorResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: ThrowErrorRequest,
) -> Result<ThrowErrorResponse, GatewayError> {
    throw_error::run(
        d,
        ThrowError {
            job_key: r.job_key,
            error_code: r.error_code,
            error_message: r.error_message,
            variables: r.variables,
        },
    )
    .await?;
    Ok(ThrowErrorResponse {})
}
