//! `UpdateJobRetries` → `JOB UPDATE_RETRIES` on the job's partition.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::{operation_reference, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{UpdateJobRetriesRequest, UpdateJobRetriesResponse};
use crate::validate;

pub(crate) fn command(request: &UpdateJobRetriesRequest) -> Result<Record, GatewayError> {
    validate::at_least("retries", i64::from(request.retries), 1)?;
    let mut record = Record::command(
        request.job_key,
        JobIntent::UpdateRetries,
        JobRecord {
            retries: request.retries,
            ..JobRecord::default()
        },
    );
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

pub(crate) fn response(event: &Record) -> Result<UpdateJobRetriesResponse, GatewayError> {
    value_of::<JobRecord>(event)?;
    Ok(UpdateJobRetriesResponse {})
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: UpdateJobRetriesRequest,
) -> Result<UpdateJobRetriesResponse, GatewayError> {
    d.require(JobIntent::UpdateRetries, "updating job retries")?;
    let partition = validate::key("jobKey", request.job_key, d.partition_count())?;
    let event = d.execute(partition, command(&request)?).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_an_update_retries_command() {
        let record = command(&UpdateJobRetriesRequest {
            job_key: 5,
            retries: 3,
            operation_reference: Some(77),
        })
        .unwrap();
        assert_eq!(record.key, 5);
        assert_eq!(record.intent, JobIntent::UpdateRetries.into());
        assert_eq!(record.operation_reference, 77);
        assert_eq!(record.value_as::<JobRecord>().unwrap().retries, 3);
    }

    #[test]
    fn retries_must_be_positive() {
        let error = command(&UpdateJobRetriesRequest {
            job_key: 5,
            retries: 0,
            operation_reference: None,
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "The value for retries is '0' but must be greater than 0"
        );
    }
}
