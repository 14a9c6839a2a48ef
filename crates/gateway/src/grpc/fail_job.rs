//! `FailJob`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::fail_job::{self, FailJob};
use crate::proto::{FailJobRequest, FailJobResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: FailJobRequest,
) -> Result<FailJobResponse, GatewayError> {
    fail_job::run(
        d,
        FailJob {
            job_key: r.job_key,
            retries: r.retries,
            error_message: r.error_message,
            retry_back_off: r.retry_back_off,
            variables: r.variables,
        },
    )
    .await?;
    Ok(FailJobResponse {})
}
