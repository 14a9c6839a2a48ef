use beeline_protocol::intent::{JobIntent, ProcessInstanceIntent, UserTaskIntent};
use beeline_protocol::value::{JobRecord, JobResult, JobResultCorrections, UserTaskRecord};
use beeline_protocol::{Record, RejectionType};

use super::{WORKABLE, job_in_state};
use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::user_tasks::ATTRIBUTES;
use crate::processing::bpmn::behavior::variables::check_document;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::Job;

/// `JOB COMPLETE`: the worker is done. The element completes with the job's variables; an
/// execution listener's job goes back to its element's lifecycle
/// (`COMPLETE_EXECUTION_LISTENER`), a task listener's to its user task's transition
/// (`COMPLETE_TASK_LISTENER` with its corrections, or `DENY_TASK_LISTENER`).
pub(crate) struct JobCompleteProcessor;

impl CommandProcessor for JobCompleteProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<JobRecord>(command)?;
        // Read (in canonical text) when the element completes: only checked here.
        if let Err(reason) = check_document(&request.variables) {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to complete job with key '{}' with variables, but {reason}",
                    command.key
                ),
            );
            return Ok(());
        }
        let Some(job) = job_in_state(ctx, command, "complete", WORKABLE)? else {
            return Ok(());
        };
        let mut completed = job.record();
        if completed.job_kind == "TASK_LISTENER"
            && let Some(reason) = task_listener_refusal(ctx, command, request, &job)?
        {
            ctx.reject(command, RejectionType::InvalidArgument, reason);
            return Ok(());
        }
        completed.variables = if request.variables.is_empty() {
            b"{}".to_vec()
        } else {
            request.variables.clone()
        };
        completed.result = request.result.clone();
        let event = ctx.append_event(command.key, JobIntent::Completed, completed.clone())?;
        ctx.respond(event);
        let Some(element) = ctx
            .state()
            .element_instances()
            .get(completed.element_instance_key)?
        else {
            return Ok(());
        };
        match completed.job_kind.as_str() {
            "EXECUTION_LISTENER" => ctx.append_command(
                element.key,
                ProcessInstanceIntent::CompleteExecutionListener,
                element.record(),
            ),
            "TASK_LISTENER" => {
                let Some(stored) = ctx.state().user_tasks().get(element.user_task_key)? else {
                    return Ok(());
                };
                let mut task = stored.intermediate();
                let result = completed.result.unwrap_or_default();
                if result.denied {
                    task.denied_reason = result.denied_reason;
                    ctx.append_command(task.user_task_key, UserTaskIntent::DenyTaskListener, task);
                } else {
                    correct(&mut task, &result);
                    ctx.append_command(
                        task.user_task_key,
                        UserTaskIntent::CompleteTaskListener,
                        task,
                    );
                }
            }
            _ => ctx.append_command(
                element.key,
                ProcessInstanceIntent::CompleteElement,
                element.record(),
            ),
        }
        Ok(())
    }
}

/// The listener event types whose transitions a listener may deny.
const DENIABLE: &[&str] = &["ASSIGNING", "COMPLETING", "UPDATING"];

/// Why a task listener's job cannot complete as asked, if it cannot (Zeebe's checks, in its
/// order): with variables, denying what cannot be denied, denying with corrections,
/// correcting the assignee the model gave a task being created, correcting an unknown
/// attribute.
fn task_listener_refusal(
    ctx: &ProcessingContext<'_, '_>,
    command: &Record,
    request: &JobRecord,
    job: &Job,
) -> Result<Option<String>, ProcessingError> {
    let job = job.record();
    let what = format!(
        "(job key '{}', type '{}', processInstanceKey '{}')",
        command.key, job.r#type, job.process_instance_key
    );
    let empty = JobResult::default();
    let result = request.result.as_ref().unwrap_or(&empty);
    if !request.variables.iter().all(u8::is_ascii_whitespace)
        && request.variables.as_slice() != b"{}"
    {
        return Ok(Some(format!(
            "Task Listener job completion with variables payload provided is not yet supported {what}. Support will be enabled with the resolution of issue #23702."
        )));
    }
    if result.denied && !DENIABLE.contains(&job.job_listener_event_type.as_str()) {
        return Ok(Some(format!(
            "Denying result is not supported for '{}' task listener jobs {what}. Only the following listener event types support denying: [{}].",
            job.job_listener_event_type,
            DENIABLE.join(", ")
        )));
    }
    if result.denied && !result.corrected_attributes.is_empty() {
        return Ok(Some(format!(
            "Expected to complete task listener job with corrections, but the job result is denied {what}. The corrections would be reverted by the denial. Either complete the job with corrections without setting denied, or complete the job with a denied result but no corrections."
        )));
    }
    if job.job_listener_event_type == "CREATING"
        && result.corrected_attributes.iter().any(|a| a == "assignee")
        && let Some(element) = ctx
            .state()
            .element_instances()
            .get(job.element_instance_key)?
        && let Some(task) = ctx.state().user_tasks().get(element.user_task_key)?
        && !task.initial_assignee.is_empty()
    {
        return Ok(Some(format!(
            "Expected to complete task listener job, but correcting the assignee on 'CREATING' event is not supported when the user task has an assignee defined in the model {what}. Use the 'CREATING' event to set an assignee only if it was not defined. Use the 'ASSIGNING' event to correct an assignee that is already defined."
        )));
    }
    if let Some(unknown) = result
        .corrected_attributes
        .iter()
        .find(|a| !ATTRIBUTES.contains(&a.as_str()))
    {
        return Ok(Some(format!(
            "Expected to complete task listener job with a corrections result, but property '{unknown}' cannot be corrected {what}. Only the following properties can be corrected: [{}].",
            ATTRIBUTES.join(", ")
        )));
    }
    Ok(None)
}

/// Applies a listener's corrections to the task: the corrected attributes take the result's
/// values, and are named in `changedAttributes`.
fn correct(task: &mut UserTaskRecord, result: &JobResult) {
    let corrections = result.corrections.clone().unwrap_or(JobResultCorrections {
        priority: -1,
        ..JobResultCorrections::default()
    });
    for attribute in &result.corrected_attributes {
        match attribute.as_str() {
            "assignee" => task.assignee = corrections.assignee.clone(),
            "candidateGroupsList" => {
                task.candidate_groups_list = corrections.candidate_groups_list.clone()
            }
            "candidateUsersList" => {
                task.candidate_users_list = corrections.candidate_users_list.clone()
            }
            "dueDate" => task.due_date = corrections.due_date.clone(),
            "followUpDate" => task.follow_up_date = corrections.follow_up_date.clone(),
            "priority" => task.priority = corrections.priority,
            _ => {}
        }
    }
    task.changed_attributes = result.corrected_attributes.clone();
}
