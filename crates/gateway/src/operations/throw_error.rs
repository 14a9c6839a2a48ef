//! Throw a BPMN error from a job: `JOB THROW_ERROR` on the job's partition. Never shed by
//! backpressure.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::acknowledged;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThrowError {
    pub job_key: i64,
    pub error_code: String,
    pub error_message: String,
    /// A JSON object as text; empty for none.
    pub variables: String,
}

pub(crate) fn command(request: &ThrowError) -> Result<Record, GatewayError> {
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

pub async fn run(d: &Dispatcher, request: ThrowError) -> Result<(), GatewayError> {
    d.require(JobIntent::ThrowError, "throwing BPMN errors from jobs")?;
    acknowledged::<JobRecord>(d, "jobKey", request.job_key, command(&request)?).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_throw_error_command() {
        let record = command(&ThrowError {
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
    }

    #[test]
    fn an_error_code_is_required() {
        let error = command(&ThrowError {
            job_key: 3,
            ..ThrowError::default()
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "No errorCode provided");
    }
}
