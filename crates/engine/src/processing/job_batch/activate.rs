use beeline_protocol::intent::JobBatchIntent;
use beeline_protocol::value::{JobBatchRecord, JobRecord};
use beeline_protocol::{DEFAULT_TENANT, Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::bpmn::ErrorType;
use crate::processing::job::raise_job_incident;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::document;

/// `JOB_BATCH ACTIVATE`: hands activatable jobs of a type to a worker for `timeout` ms, each
/// with its variables (those asked for, or all visible from the job's element).
///
/// A job too large for one message to the worker (or one log entry) is not handed out: it gets
/// a `MESSAGE_SIZE_EXCEEDED` incident, which takes it out of activation until the incident is
/// resolved, and the batch goes on with the next job. Handed out, or refused as a whole, it
/// would come back to the front of every activation and starve the jobs behind it.
pub(crate) struct JobBatchActivateProcessor;

/// What one job takes in a batch beyond its encoded record (its key and framing).
const JOB_OVERHEAD: usize = 32;

/// What one incident takes in a batch beyond its message.
const INCIDENT_OVERHEAD: usize = 512;

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
        let keys = ctx.state().jobs().activatable(
            &request.r#type,
            &tenants(&request.tenant_ids),
            request.max_jobs_to_activate as usize,
        )?;
        let deadline = ctx.now().saturating_add(request.timeout);
        let mut batch = request.clone();
        batch.job_keys.clear();
        batch.jobs.clear();
        // One job may take up to the job limit; more jobs stop at half a log entry, as the
        // follow-ups of any batch do; everything, incidents included, stays within the entry.
        let max_job = ctx.max_job_bytes;
        let soft_budget = max_job / 2;
        let hard_budget = max_job + soft_budget;
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
            let size = prost::Message::encoded_len(&record) + JOB_OVERHEAD;
            if size > max_job {
                let message = too_large_message(key, size, max_job);
                let incident_size = message.len() + INCIDENT_OVERHEAD;
                if bytes + incident_size > hard_budget {
                    batch.truncated = true;
                    break;
                }
                bytes += incident_size;
                raise_job_incident(ctx, key, &record, ErrorType::MessageSizeExceeded, message)?;
                continue;
            }
            if (bytes + size > soft_budget && !batch.jobs.is_empty()) || bytes + size > hard_budget
            {
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

/// The tenants whose jobs a batch takes: none named means the default tenant.
fn tenants(tenant_ids: &[String]) -> Vec<String> {
    if tenant_ids.is_empty() {
        vec![DEFAULT_TENANT.to_owned()]
    } else {
        tenant_ids.to_vec()
    }
}

/// Zeebe's incident message for a job too large to activate, with the size it would take.
fn too_large_message(key: i64, size: usize, max: usize) -> String {
    format!(
        "The job with key '{key}' can not be activated, because with {size} bytes it is larger \
         than the configured message size ({max} bytes for a job). Try to reduce the size by \
         reducing the number of fetched variables or modifying the variable values."
    )
}

/// Whether a job with its variables is too large to be handed to a worker.
pub(crate) fn too_large_to_hand_out(ctx: &ProcessingContext<'_, '_>, job: &JobRecord) -> bool {
    prost::Message::encoded_len(job) + JOB_OVERHEAD > ctx.max_job_bytes
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
