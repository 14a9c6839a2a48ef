//! Complete a job: `JOB COMPLETE` on the job's partition. Never shed by backpressure.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;

use super::acknowledged;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompleteJob {
    pub job_key: i64,
    /// A JSON object as text; empty for none.
    pub variables: String,
    /// The client sent a job result (a user task listener's corrections or denial, or an
    /// ad-hoc sub-process's activations), which the engine cannot take yet.
    pub has_result: bool,
}

pub(crate) fn command(request: &CompleteJob) -> Result<Record, GatewayError> {
    if request.has_result {
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

pub async fn run(d: &Dispatcher, request: CompleteJob) -> Result<(), GatewayError> {
    d.require(JobIntent::Complete, "completing jobs")?;
    acknowledged::<JobRecord>(d, "jobKey", request.job_key, command(&request)?).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_complete_command() {
        let record = command(&CompleteJob {
            job_key: 7,
            variables: r#"{"ok":true}"#.into(),
            has_result: false,
        })
        .unwrap();
        assert_eq!(record.key, 7);
        assert_eq!(record.intent, JobIntent::Complete.into());
        assert_eq!(
            record.value_as::<JobRecord>().unwrap().variables,
            br#"{"ok":true}"#
        );
    }

    #[test]
    fn results_and_bad_variables_are_refused() {
        let with_result = command(&CompleteJob {
            job_key: 7,
            has_result: true,
            ..CompleteJob::default()
        });
        assert!(matches!(with_result, Err(GatewayError::Unimplemented(_))));
        let bad = command(&CompleteJob {
            job_key: 7,
            variables: "3".into(),
            has_result: false,
        });
        assert!(bad.unwrap_err().to_string().contains("'INTEGER'"));
    }
}
