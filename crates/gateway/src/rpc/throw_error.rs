//! `ThrowError` → `JOB THROW_ERROR` on the job's partition. Never shed by backpressure.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::value_of;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{ThrowErrorRequest, ThrowErrorResponse};
use crate::validate;

pub(crate) fn command(request: &ThrowErrorRequest) -> Result<Record, GatewayError> {
    validate::not_empty("errorCode", &request.error_code)?;
    let variables = validate::variables("variables", &request.variables)?;
    Ok(Record::command(
        request.job_key,
        JobIntent::ThrowError,
        JobRecord {
            error_code: request.error_code.clone(),
            error_message: request.error_message.clone(),
            variables,
            ..JobRecord::default()
        },
    ))
}

pub(crate) fn response(event: &Record) -> Result<ThrowErrorResponse, GatewayError> {
    value_of::<JobRecord>(event)?;
    Ok(ThrowErrorResponse {})
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: ThrowErrorRequest,
) -> Result<ThrowErrorResponse, GatewayError> {
    d.require(JobIntent::ThrowError, "throwing BPMN errors from jobs")?;
    let partition = validate::key("jobKey", request.job_key, d.partition_count())?;
    let event = d.execute(partition, command(&request)?).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_throw_error_command() {
        let record = command(&ThrowErrorRequest {
            job_key: 3,
            error_code: "NOT_PAID".into(),
            error_message: "no money".into(),
            variables: r#"{"a":1}"#.into(),
        })
        .unwrap();
        assert_eq!(record.key, 3);
        assert_eq!(record.intent, JobIntent::ThrowError.into());
        let job = record.value_as::<JobRecord>().unwrap();
        assert_eq!(job.error_code, "NOT_PAID");
        assert_eq!(job.error_message, "no money");
        assert!(response(&Record::event(3, JobIntent::ErrorThrown, job.clone())).is_ok());
    }

    #[test]
    fn an_error_code_is_required() {
        let error = command(&ThrowErrorRequest {
            job_key: 3,
            error_code: String::new(),
            error_message: String::new(),
            variables: String::new(),
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "No errorCode provided");
    }
}
