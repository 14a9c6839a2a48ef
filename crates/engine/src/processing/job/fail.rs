use beeline_protocol::intent::{IncidentIntent, JobIntent};
use beeline_protocol::value::{IncidentRecord, JobRecord};
use beeline_protocol::{Record, RejectionType};

use super::{WORKABLE, job_in_state};
use crate::error::ProcessingError;
use crate::processing::bpmn::ErrorType;
use crate::processing::bpmn::behavior::jobs::no_retries_error;
use crate::processing::bpmn::behavior::variables::{Document, VariableOwner, merge_local};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `JOB FAIL`: the worker could not do it. With retries left the job comes back (after the
/// back-off, if any); without, an incident waits for a person.
pub(crate) struct JobFailProcessor;

impl CommandProcessor for JobFailProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<JobRecord>(command)?.clone();
        let variables = match Document::parse(&request.variables) {
            Ok(variables) => variables,
            Err(reason) => {
                ctx.reject(
                    command,
                    RejectionType::InvalidArgument,
                    format!(
                        "Expected to fail job with key '{}' with variables, but {reason}",
                        command.key
                    ),
                );
                return Ok(());
            }
        };
        let Some(job) = job_in_state(ctx, command, "fail", WORKABLE)? else {
            return Ok(());
        };
        let mut failed = job.record();
        failed.retries = request.retries;
        failed.error_message = request.error_message.clone();
        failed.retry_backoff = request.retry_backoff.max(0);
        failed.recurring_time = if request.retries > 0 && request.retry_backoff > 0 {
            ctx.now().saturating_add(request.retry_backoff)
        } else {
            -1
        };
        failed.variables = b"{}".to_vec();
        failed.deadline = -1;
        let event = ctx.append_event(command.key, JobIntent::Failed, failed.clone())?;
        ctx.respond(event);
        if !variables.is_empty()
            && let Some(element) = ctx
                .state()
                .element_instances()
                .get(failed.element_instance_key)?
        {
            let owner = VariableOwner::of(&element.record());
            merge_local(ctx, element.key, &variables, &owner)?;
        }
        if failed.retries <= 0 {
            let message = if failed.error_message.is_empty() {
                "No more retries left.".to_string()
            } else {
                failed.error_message.clone()
            };
            let error_type = no_retries_error(&failed.job_kind);
            raise_job_incident(ctx, command.key, &failed, error_type, message)?;
        }
        Ok(())
    }
}

/// An incident about a job (out of retries, or an error nobody caught).
pub(crate) fn raise_job_incident(
    ctx: &mut ProcessingContext<'_, '_>,
    job_key: i64,
    job: &JobRecord,
    error_type: ErrorType,
    message: String,
) -> Result<(), ProcessingError> {
    let key = ctx.next_key()?;
    ctx.append_event(
        key,
        IncidentIntent::Created,
        IncidentRecord {
            error_type: error_type.name().to_string(),
            error_message: message,
            bpmn_process_id: job.bpmn_process_id.clone(),
            process_definition_key: job.process_definition_key,
            process_instance_key: job.process_instance_key,
            element_id: job.element_id.clone(),
            element_instance_key: job.element_instance_key,
            job_key,
            variable_scope_key: job.element_instance_key,
            tenant_id: job.tenant_id.clone(),
        },
    )?;
    Ok(())
}
