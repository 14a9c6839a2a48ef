//! `CompleteJob` → `JOB COMPLETE` on the job's partition. Never shed by backpressure.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::value_of;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{CompleteJobRequest, CompleteJobResponse, JobResult};
use crate::validate;

pub(crate) fn command(request: &CompleteJobRequest) -> Result<Record, GatewayError> {
    if request
        .result
        .as_ref()
        .is_some_and(|r| *r != JobResult::default())
    {
        // JobRecord has no place for a result yet: refusing beats dropping it silently.
        return Err(GatewayError::Unimplemented(
            "Beeline does not support job results (for user task listeners and ad-hoc \
             sub-processes) yet; complete the job without a result"
                .into(),
        ));
    }
    let variables = validate::variables("variables", &request.variables)?;
    Ok(Record::command(
        request.job_key,
        JobIntent::Complete,
        JobRecord {
            variables,
            ..JobRecord::default()
        },
    ))
}

pub(crate) fn response(event: &Record) -> Result<CompleteJobResponse, GatewayError> {
    value_of::<JobRecord>(event)?;
    Ok(CompleteJobResponse {})
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: CompleteJobRequest,
) -> Result<CompleteJobResponse, GatewayError> {
    d.require(JobIntent::Complete, "completing jobs")?;
    let partition = validate::key("jobKey", request.job_key, d.partition_count())?;
    let event = d.execute(partition, command(&request)?).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_complete_command() {
        let record = command(&CompleteJobRequest {
            job_key: 7,
            variables: r#"{"ok":true}"#.into(),
            result: None,
        })
        .unwrap();
        assert_eq!(record.key, 7);
        assert_eq!(record.intent, JobIntent::Complete.into());
        assert_eq!(
            record.value_as::<JobRecord>().unwrap().variables,
            br#"{"ok":true}"#
        );
        let response = response(&Record::event(
            7,
            JobIntent::Completed,
            JobRecord::default(),
        ));
        assert_eq!(response.unwrap(), CompleteJobResponse {});
    }

    #[test]
    fn results_and_bad_variables_are_refused() {
        let with_result = command(&CompleteJobRequest {
            job_key: 7,
            variables: String::new(),
            result: Some(JobResult {
                denied: Some(true),
                ..JobResult::default()
            }),
        });
        assert!(matches!(with_result, Err(GatewayError::Unimplemented(_))));
        let empty_result = command(&CompleteJobRequest {
            job_key: 7,
            variables: String::new(),
            result: Some(JobResult::default()),
        });
        assert!(empty_result.is_ok());
        let bad = command(&CompleteJobRequest {
            job_key: 7,
            variables: "3".into(),
            result: None,
        });
        assert!(bad.unwrap_err().to_string().contains("'INTEGER'"));
    }
}
