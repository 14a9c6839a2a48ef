//! Complete a job: `JOB COMPLETE` on the job's partition. Never shed by backpressure.

use beeline_protocol::Record;
use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::{JobRecord, JobResult, JobResultCorrections};

use super::acknowledged;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompleteJob {
    pub job_key: i64,
    /// A JSON object as text; empty for none.
    pub variables: String,
    /// What the job decided beyond its variables, if the client said.
    pub result: Option<CompletionResult>,
}

/// A job's result.
#[derive(Debug, Clone, PartialEq)]
pub enum CompletionResult {
    /// A user task listener's: deny the transition, or correct the task's attributes.
    UserTask {
        denied: bool,
        denied_reason: String,
        corrections: Corrections,
    },
    /// An ad-hoc sub-process's activations, which this engine cannot take.
    AdHocSubProcess,
}

/// A user task listener's corrections: only what is given is corrected (an empty value
/// clears the attribute).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Corrections {
    pub assignee: Option<String>,
    pub due_date: Option<String>,
    pub follow_up_date: Option<String>,
    pub candidate_users: Option<Vec<String>>,
    pub candidate_groups: Option<Vec<String>>,
    pub priority: Option<i32>,
}

/// The engine's job result: the corrected attributes named as the user task record names
/// them, in the order Zeebe's gateway lists them.
fn job_result(result: &CompletionResult) -> Result<JobResult, GatewayError> {
    let CompletionResult::UserTask {
        denied,
        denied_reason,
        corrections,
    } = result
    else {
        return Err(GatewayError::Unimplemented(
            "Beeline does not run ad-hoc sub-processes: a job result of type \
             'adHocSubProcess' cannot be taken"
                .into(),
        ));
    };
    let mut corrected = Vec::new();
    let mut values = JobResultCorrections {
        priority: -1,
        ..JobResultCorrections::default()
    };
    if let Some(assignee) = &corrections.assignee {
        corrected.push("assignee");
        values.assignee = assignee.clone();
    }
    if let Some(due_date) = &corrections.due_date {
        corrected.push("dueDate");
        values.due_date = due_date.clone();
    }
    if let Some(follow_up_date) = &corrections.follow_up_date {
        corrected.push("followUpDate");
        values.follow_up_date = follow_up_date.clone();
    }
    if let Some(users) = &corrections.candidate_users {
        corrected.push("candidateUsersList");
        values.candidate_users_list = users.clone();
    }
    if let Some(groups) = &corrections.candidate_groups {
        corrected.push("candidateGroupsList");
        values.candidate_groups_list = groups.clone();
    }
    if let Some(priority) = corrections.priority {
        corrected.push("priority");
        values.priority = priority;
    }
    Ok(JobResult {
        r#type: "USER_TASK".to_string(),
        denied: *denied,
        denied_reason: denied_reason.clone(),
        corrected_attributes: corrected.into_iter().map(str::to_string).collect(),
        corrections: Some(values),
    })
}

pub(crate) fn command(request: &CompleteJob) -> Result<Record, GatewayError> {
    let result = request.result.as_ref().map(job_result).transpose()?;
    let variables = validate::variables("variables", &request.variables)?;
    Ok(Record::command(
        request.job_key,
        JobIntent::Complete,
        JobRecord {
            variables,
            result,
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
            result: None,
        })
        .unwrap();
        assert_eq!(record.key, 7);
        assert_eq!(record.intent, JobIntent::Complete.into());
        let job = record.value_as::<JobRecord>().unwrap();
        assert_eq!(job.variables, br#"{"ok":true}"#);
        assert_eq!(job.result, None);
    }

    #[test]
    fn a_user_task_result_names_what_it_corrects() {
        let record = command(&CompleteJob {
            job_key: 7,
            result: Some(CompletionResult::UserTask {
                denied: false,
                denied_reason: String::new(),
                corrections: Corrections {
                    assignee: Some(String::new()),
                    candidate_groups: Some(vec!["sales".into()]),
                    priority: Some(80),
                    ..Corrections::default()
                },
            }),
            ..CompleteJob::default()
        })
        .unwrap();
        let result = record
            .value_as::<JobRecord>()
            .unwrap()
            .result
            .clone()
            .unwrap();
        assert_eq!(
            result.corrected_attributes,
            vec!["assignee", "candidateGroupsList", "priority"]
        );
        let corrections = result.corrections.unwrap();
        assert_eq!(corrections.assignee, "");
        assert_eq!(corrections.candidate_groups_list, vec!["sales"]);
        assert_eq!(corrections.priority, 80);
    }

    #[test]
    fn ad_hoc_results_and_bad_variables_are_refused() {
        let ad_hoc = command(&CompleteJob {
            job_key: 7,
            result: Some(CompletionResult::AdHocSubProcess),
            ..CompleteJob::default()
        });
        assert!(matches!(ad_hoc, Err(GatewayError::Unimplemented(_))));
        let bad = command(&CompleteJob {
            job_key: 7,
            variables: "3".into(),
            result: None,
        });
        assert!(bad.unwrap_err().to_string().contains("'INTEGER'"));
    }
}
