use beeline_protocol::intent::JobBatchIntent;
use beeline_protocol::value::JobBatchRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::document;

/// `JOB_BATCH ACTIVATE`: hands activatable jobs of a type to a worker for `timeout` ms, each
/// with its variables (those asked for, or all visible from the job's element).
pub(crate) struct JobBatchActivateProcessor;

/// Bytes of job data one batch may carry, well inside one log entry and one gRPC message.
const MAX_BATCH_BYTES: usize = 2 * 1024 * 1024;

impl CommandProcessor for JobBatchActivateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<JobBatchRecord>(command)?.clone();
        if request.r#type.is_empty() {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                "Expected to activate jobs of a type, but the type is empty",
            );
            return Ok(());
        }
        if request.max_jobs_to_activate < 1 {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to activate at least one job, but the maximum number of jobs to activate is {}",
                    request.max_jobs_to_activate
                ),
            );
            return Ok(());
        }
        if request.timeout < 1 {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected the job timeout to be greater than zero, but was {}",
                    request.timeout
                ),
            );
            return Ok(());
        }
        let keys = ctx
            .state()
            .jobs()
            .activatable(&request.r#type, request.max_jobs_to_activate as usize)?;
        let deadline = ctx.now().saturating_add(request.timeout);
        let mut batch = request.clone();
        batch.job_keys.clear();
        batch.jobs.clear();
        let mut bytes = 0usize;
        for key in keys {
            let Some(job) = ctx.state().jobs().get(key)? else {
                continue;
            };
            let mut record = job.record();
            record.worker = request.worker.clone();
            record.deadline = deadline;
            record.variables =
                job_variables(ctx, record.element_instance_key, &request.fetch_variables)?;
            let size = record.variables.len() + 512;
            if bytes + size > MAX_BATCH_BYTES && !batch.jobs.is_empty() {
                batch.truncated = true;
                break;
            }
            bytes += size;
            batch.job_keys.push(key);
            batch.jobs.push(record);
        }
        let key = ctx.next_key()?;
        let event = ctx.append_event(key, JobBatchIntent::Activated, batch)?;
        ctx.respond(event);
        Ok(())
    }
}

/// The variables a job is handed: the ones asked for, else all visible from its element.
pub(crate) fn job_variables(
    ctx: &ProcessingContext<'_, '_>,
    scope: i64,
    fetch: &[String],
) -> Result<Vec<u8>, ProcessingError> {
    let variables = ctx.state().variables();
    if fetch.is_empty() {
        let visible = variables.visible(scope)?;
        return Ok(document(
            visible.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        ));
    }
    let mut found = Vec::new();
    for name in fetch {
        if let Some((_, variable)) = variables.get_visible(scope, name)? {
            found.push((name.as_str(), variable.value));
        }
    }
    Ok(document(found.iter().map(|(n, v)| (*n, v.as_str()))))
}
