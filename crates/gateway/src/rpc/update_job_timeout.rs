//! `UpdateJobTimeout` → `JOB UPDATE_TIMEOUT` on the job's partition.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::{operation_reference, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{UpdateJobTimeoutRequest, UpdateJobTimeoutResponse};
use crate::validate;

pub(crate) fn command(request: &UpdateJobTimeoutRequest) -> Result<Record, GatewayError> {
    validate::at_least("timeout", request.timeout, 1)?;
    let mut record = Record::command(
        request.job_key,
        JobIntent::UpdateTimeout,
        JobRecord {
            timeout: request.timeout,
            ..JobRecord::default()
        },
    );
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

pub(crate) fn response(event: &Record) -> Result<UpdateJobTimeoutResponse, GatewayError> {
    value_of::<JobRecord>(event)?;
    Ok(UpdateJobTimeoutResponse {})
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: UpdateJobTimeoutRequest,
) -> Result<UpdateJobTimeoutResponse, GatewayError> {
    d.require(JobIntent::UpdateTimeout, "updating job timeouts")?;
    let partition = validate::key("jobKey", request.job_key, d.partition_count())?;
    let event = d.execute(partition, command(&request)?).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_an_update_timeout_command() {
        let record = command(&UpdateJobTimeoutRequest {
            job_key: 5,
            timeout: 30_000,
            operation_reference: None,
        })
        .unwrap();
        assert_eq!(record.intent, JobIntent::UpdateTimeout.into());
        assert_eq!(record.operation_reference, -1);
        assert_eq!(record.value_as::<JobRecord>().unwrap().timeout, 30_000);
        let error = command(&UpdateJobTimeoutRequest {
            job_key: 5,
            timeout: 0,
            operation_reference: None,
        })
        .unwrap_err();
        assert!(error.to_string().contains("timeout is '0'"));
    }
}
