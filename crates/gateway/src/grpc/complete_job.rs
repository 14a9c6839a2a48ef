//! `CompleteJob`.

use crate::error::GatewayError;
use crate::operations::complete_job::{self, CompleteJob, CompletionResult, Corrections};
use crate::proto::{CompleteJobRequest, CompleteJobResponse, JobResult};

/// The result a client sent: a user task listener's unless it says or looks otherwise (an
/// ad-hoc sub-process's activations); an empty one is none.
fn result(result: Option<JobResult>) -> Option<CompletionResult> {
    let result = result.filter(|result| *result != JobResult::default())?;
    let ad_hoc = result.r#type.as_deref() == Some("adHocSubProcess")
        || !result.activate_elements.is_empty()
        || result.is_completion_condition_fulfilled.is_some()
        || result.is_cancel_remaining_instances.is_some();
    if ad_hoc {
        return Some(CompletionResult::AdHocSubProcess);
    }
    let corrections = result.corrections.unwrap_or_default();
    Some(CompletionResult::UserTask {
        denied: result.denied.unwrap_or(false),
        denied_reason: result.denied_reason.unwrap_or_default(),
        corrections: Corrections {
            assignee: corrections.assignee,
            due_date: corrections.due_date,
            follow_up_date: corrections.follow_up_date,
            candidate_users: corrections.candidate_users.map(|list| list.values),
            candidate_groups: corrections.candidate_groups.map(|list| list.values),
            priority: corrections.priority,
        },
    })
}

pub(crate) fn request(request: CompleteJobRequest) -> CompleteJob {
    CompleteJob {
        job_key: request.job_key,
        variables: request.variables,
        result: result(request.result),
    }
}

pub(super) async fn handle(
    d: &crate::dispatch::Dispatcher,
    r: CompleteJobRequest,
) -> Result<CompleteJobResponse, GatewayError> {
    complete_job::run(d, request(r)).await?;
    Ok(CompleteJobResponse {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{JobResultActivateElement, JobResultCorrections, StringList};

    fn with(result: Option<JobResult>) -> CompleteJob {
        request(CompleteJobRequest {
            job_key: 1,
            variables: String::new(),
            result,
        })
    }

    #[test]
    fn an_empty_result_is_no_result() {
        assert_eq!(with(None).result, None);
        assert_eq!(with(Some(JobResult::default())).result, None);
    }

    #[test]
    fn a_listener_result_carries_its_denial_and_corrections() {
        let denied = with(Some(JobResult {
            denied: Some(true),
            denied_reason: Some("no".into()),
            ..JobResult::default()
        }));
        assert_eq!(
            denied.result,
            Some(CompletionResult::UserTask {
                denied: true,
                denied_reason: "no".into(),
                corrections: Corrections::default(),
            })
        );
        let corrected = with(Some(JobResult {
            corrections: Some(JobResultCorrections {
                candidate_users: Some(StringList { values: vec![] }),
                priority: Some(3),
                ..JobResultCorrections::default()
            }),
            ..JobResult::default()
        }));
        assert_eq!(
            corrected.result,
            Some(CompletionResult::UserTask {
                denied: false,
                denied_reason: String::new(),
                corrections: Corrections {
                    candidate_users: Some(vec![]),
                    priority: Some(3),
                    ..Corrections::default()
                },
            })
        );
    }

    #[test]
    fn an_ad_hoc_result_is_told_apart() {
        let ad_hoc = with(Some(JobResult {
            activate_elements: vec![JobResultActivateElement {
                element_id: "a".into(),
                variables: String::new(),
            }],
            ..JobResult::default()
        }));
        assert_eq!(ad_hoc.result, Some(CompletionResult::AdHocSubProcess));
    }
}
