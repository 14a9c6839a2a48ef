//! Change a job's retries or timeout. One attribute is `JOB UPDATE_RETRIES` or
//! `JOB UPDATE_TIMEOUT` (gRPC's UpdateJobRetries and UpdateJobTimeout); both at once are one
//! `JOB UPDATE` with its changeset, all or nothing.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::{acknowledged, operation_reference};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateJob {
    pub job_key: i64,
    /// The job's new retries.
    pub retries: Option<i32>,
    /// The job's new timeout: it belongs to its worker for this many ms from now.
    pub timeout: Option<i64>,
    pub operation_reference: Option<u64>,
}

/// Zeebe's names of the attributes in a job's changeset.
const RETRIES: &str = "retries";
const TIMEOUT: &str = "timeout";

pub(crate) fn command(request: &UpdateJob) -> Result<Record, GatewayError> {
    if let Some(retries) = request.retries {
        validate::at_least("retries", i64::from(retries), 1)?;
    }
    if let Some(timeout) = request.timeout {
        validate::at_least("timeout", timeout, 1)?;
    }
    let (intent, job) = match (request.retries, request.timeout) {
        (Some(retries), None) => (
            JobIntent::UpdateRetries,
            JobRecord {
                retries,
                ..JobRecord::default()
            },
        ),
        (None, Some(timeout)) => (
            JobIntent::UpdateTimeout,
            JobRecord {
                timeout,
                ..JobRecord::default()
            },
        ),
        (Some(retries), Some(timeout)) => (
            JobIntent::Update,
            JobRecord {
                retries,
                timeout,
                changed_attributes: vec![RETRIES.into(), TIMEOUT.into()],
                ..JobRecord::default()
            },
        ),
        (None, None) => {
            return Err(GatewayError::InvalidArgument(
                "At least one of [retries, timeout] is required".into(),
            ));
        }
    };
    let mut record = Record::command(request.job_key, intent, job);
    record.operation_reference = operation_reference(request.operation_reference);
    Ok(record)
}

pub async fn run(d: &Dispatcher, request: UpdateJob) -> Result<(), GatewayError> {
    let command = command(&request)?;
    let what = match (request.retries, request.timeout) {
        (Some(_), None) => "updating job retries",
        (None, Some(_)) => "updating job timeouts",
        _ => "updating a job's retries and timeout at once",
    };
    d.require(command.intent, what)?;
    acknowledged::<JobRecord>(d, "jobKey", request.job_key, command).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_alone_are_an_update_retries_command() {
        let record = command(&UpdateJob {
            job_key: 5,
            retries: Some(3),
            operation_reference: Some(77),
            ..UpdateJob::default()
        })
        .unwrap();
        assert_eq!(record.key, 5);
        assert_eq!(record.intent, JobIntent::UpdateRetries.into());
        assert_eq!(record.operation_reference, 77);
        assert_eq!(record.value_as::<JobRecord>().unwrap().retries, 3);
    }

    #[test]
    fn a_timeout_alone_is_an_update_timeout_command() {
        let record = command(&UpdateJob {
            job_key: 5,
            timeout: Some(30_000),
            ..UpdateJob::default()
        })
        .unwrap();
        assert_eq!(record.intent, JobIntent::UpdateTimeout.into());
        assert_eq!(record.operation_reference, -1);
        assert_eq!(record.value_as::<JobRecord>().unwrap().timeout, 30_000);
    }

    #[test]
    fn both_are_one_update_with_its_changeset() {
        let record = command(&UpdateJob {
            job_key: 5,
            retries: Some(2),
            timeout: Some(1_000),
            ..UpdateJob::default()
        })
        .unwrap();
        assert_eq!(record.intent, JobIntent::Update.into());
        let job = record.value_as::<JobRecord>().unwrap();
        assert_eq!((job.retries, job.timeout), (2, 1_000));
        assert_eq!(job.changed_attributes, vec!["retries", "timeout"]);
    }

    #[test]
    fn values_are_checked() {
        let error = command(&UpdateJob {
            job_key: 5,
            retries: Some(0),
            ..UpdateJob::default()
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "The value for retries is '0' but must be greater than 0"
        );
        let error = command(&UpdateJob {
            job_key: 5,
            timeout: Some(0),
            ..UpdateJob::default()
        })
        .unwrap_err();
        assert!(error.to_string().contains("timeout is '0'"));
        let nothing = command(&UpdateJob {
            job_key: 5,
            ..UpdateJob::default()
        })
        .unwrap_err();
        assert_eq!(
            nothing.to_string(),
            "At least one of [retries, timeout] is required"
        );
    }
}
