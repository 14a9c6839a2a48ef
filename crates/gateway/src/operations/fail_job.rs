//! Fail a job: `JOB FAIL` on the job's partition. Never shed by backpressure.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::acknowledged;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FailJob {
    pub job_key: i64,
    /// The retries left; 0 raises an incident.
    pub retries: i32,
    pub error_message: String,
    /// Milliseconds before the job may be activated again.
    pub retry_back_off: i64,
    /// A JSON object as text; empty for none.
    pub variables: String,
}

pub(crate) fn command(request: &FailJob) -> Result<Record, GatewayError> {
    validate::at_least("retries", i64::from(request.retries), 0)?;
    validate::at_least("retryBackOff", request.retry_back_off, 0)?;
    let variables = validate::variables("variables", &request.variables)?;
    Ok(Record::command(
        request.job_key,
        JobIntent::Fail,
        JobRecord {
            retries: request.retries,
            error_message: request.error_message.clone(),
            retry_backoff: request.retry_back_off,
            variables,
            ..JobRecord::default()
        },
    ))
}

pub async fn run(d: &Dispatcher, request: FailJob) -> Result<(), GatewayError> {
    d.require(JobIntent::Fail, "failing jobs")?;
    acknowledged::<JobRecord>(d, "jobKey", request.job_key, command(&request)?).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> FailJob {
        FailJob {
            job_key: 9,
            retries: 2,
            error_message: "boom".into(),
            retry_back_off: 1000,
            variables: String::new(),
        }
    }

    #[test]
    fn request_becomes_a_fail_command() {
        let record = command(&request()).unwrap();
        assert_eq!(record.key, 9);
        assert_eq!(record.intent, JobIntent::Fail.into());
        let job = record.value_as::<JobRecord>().unwrap();
        assert_eq!(job.retries, 2);
        assert_eq!(job.error_message, "boom");
        assert_eq!(job.retry_backoff, 1000);
        assert_eq!(job.variables, b"{}");
    }

    #[test]
    fn negative_retries_and_back_off_are_refused() {
        let error = command(&FailJob {
            retries: -1,
            ..request()
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "The value for retries is '-1' but must be 0 or greater"
        );
        let error = command(&FailJob {
            retry_back_off: -5,
            ..request()
        })
        .unwrap_err();
        assert!(error.to_string().contains("retryBackOff"));
    }
}
