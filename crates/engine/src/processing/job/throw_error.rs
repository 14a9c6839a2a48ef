use beeline_protocol::intent::JobIntent;
use beeline_protocol::value::JobRecord;
use beeline_protocol::{Record, RejectionType};

use super::fail::raise_job_incident;
use super::{WORKABLE, job_in_state};
use crate::error::ProcessingError;
use crate::processing::bpmn::ErrorType;
use crate::processing::bpmn::behavior::events::{Thrown, find_catch, trigger};
use crate::processing::bpmn::behavior::throw::error_variables;
use crate::processing::bpmn::behavior::variables::Document;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `JOB THROW_ERROR`: the worker reports a business error, caught by the nearest error
/// boundary event or error event sub-process (by code, or catch-all); uncaught, an incident.
pub(crate) struct JobThrowErrorProcessor;

impl CommandProcessor for JobThrowErrorProcessor {
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
                        "Expected to throw an error for job with key '{}' with variables, but {reason}",
                        command.key
                    ),
                );
                return Ok(());
            }
        };
        let Some(job) = job_in_state(ctx, command, "throw an error for", WORKABLE)? else {
            return Ok(());
        };
        let mut thrown = job.record();
        if !matches!(thrown.job_kind.as_str(), "" | "BPMN_ELEMENT") {
            // A listener's element is not ACTIVATED: nothing could catch the error.
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Cannot throw BPMN error from {} job with key '{}', type '{}' and processInstanceKey '{}'",
                    thrown.job_kind, command.key, thrown.r#type, thrown.process_instance_key
                ),
            );
            return Ok(());
        }
        thrown.error_code = request.error_code.clone();
        thrown.error_message = request.error_message.clone();
        thrown.variables = b"{}".to_vec();
        thrown.deadline = -1;
        let event = ctx.append_event(command.key, JobIntent::ErrorThrown, thrown.clone())?;
        ctx.respond(event);
        if let Some(element) = ctx
            .state()
            .element_instances()
            .get(thrown.element_instance_key)?
            && let Some(process) = ctx
                .state()
                .processes()
                .deployed(thrown.process_definition_key)?
            && let Some((process, catch)) = find_catch(
                ctx,
                &process,
                element.key,
                Thrown::Error(&thrown.error_code),
            )?
        {
            let variables = error_variables(
                catch.element(&process.model),
                &thrown.error_code,
                &thrown.error_message,
                variables,
            );
            return trigger(ctx, &process, &catch, &variables);
        }
        let message = format!(
            "Expected to throw an error event with the code '{}' with message '{}', but it was not caught. No error events are available in the scope.",
            thrown.error_code, thrown.error_message
        );
        raise_job_incident(
            ctx,
            command.key,
            &thrown,
            ErrorType::UnhandledErrorEvent,
            message,
        )
    }
}
