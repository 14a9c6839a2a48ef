//! `UpdateJobRetries` and `UpdateJobTimeout`: one attribute each of the job update.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::update_job::{self, UpdateJob};
use crate::proto::{
    UpdateJobRetriesRequest, UpdateJobRetriesResponse, UpdateJobTimeoutRequest,
    UpdateJobTimeoutResponse,
};

pub(super) async fn retries(
    d: &Dispatcher,
    r: UpdateJobRetriesRequest,
) -> Result<UpdateJobRetriesResponse, GatewayError> {
    update_job::run(
        d,
        UpdateJob {
            job_key: r.job_key,
            retries: Some(r.retries),
            timeout: None,
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(UpdateJobRetriesResponse {})
}

pub(super) async fn timeout(
    d: &Dispatcher,
    r: UpdateJobTimeoutRequest,
) -> Result<UpdateJobTimeoutResponse, GatewayError> {
    update_job::run(
        d,
        UpdateJob {
            job_key: r.job_key,
            retries: None,
            timeout: Some(r.timeout),
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(UpdateJobTimeoutResponse {})
}
