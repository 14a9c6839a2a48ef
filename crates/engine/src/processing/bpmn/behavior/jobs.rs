//! Jobs of job-worker elements (service tasks and the like), created when the element is
//! activated, and of listeners; canceled when the element is terminated (Zeebe's
//! `BpmnJobBehavior`).

use std::collections::BTreeMap;

use beeline_bpmn::{
    ExecutionListenerEventType, ExprOrStatic, JobWorkerProperties, TaskHeader,
    TaskListenerEventType,
};
use beeline_feel::Value;
use beeline_protocol::intent::{IncidentIntent, JobBatchIntent, JobIntent, ProcessInstanceIntent};
use beeline_protocol::value::{JobBatchRecord, JobRecord};

use super::subscriptions;
use super::variables::eval;
use crate::error::ProcessingError;
use crate::expression::wrong_type;
use crate::processing::ProcessingContext;
use crate::processing::bpmn::{BpmnElementContext, ErrorType, Failure, Step};
use crate::processing::job_batch::{job_variables, too_large_to_hand_out};
use crate::push::{Push, PushSlot};

/// A job worker element (a service task, or a send, script, business rule task or message
/// throw event with a `zeebe:taskDefinition`) is activated: its job's properties are
/// evaluated first (a failure there is an incident that leaves no subscription open, as in
/// Zeebe), then what it waits for is opened, the job created and ELEMENT_ACTIVATED written
/// (Zeebe's order).
pub(crate) fn activate_job_worker(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    properties: &JobWorkerProperties,
) -> Step<()> {
    let (job_type, retries) = evaluate(bpmn, &properties.job_type, &properties.retries)?;
    subscriptions::open(bpmn)?;
    create(
        bpmn,
        JobKind::BpmnElement,
        job_type,
        retries,
        headers(&properties.task_headers),
    )?;
    bpmn.write(ProcessInstanceIntent::ElementActivated)?;
    Ok(())
}

/// The custom headers of a job, from `zeebe:taskHeaders`.
pub(crate) fn headers(task_headers: &[TaskHeader]) -> BTreeMap<String, String> {
    task_headers
        .iter()
        .map(|h| (h.key.clone(), h.value.clone()))
        .collect()
}

fn extract_value_error(message: String) -> Failure {
    Failure::Incident(ErrorType::ExtractValueError, message)
}

/// What a job is for (Zeebe's `JobKind`, with the `JobListenerEventType` of a listener's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobKind {
    /// The work of the element itself.
    BpmnElement,
    ExecutionListener(ExecutionListenerEventType),
    TaskListener(TaskListenerEventType),
}

impl JobKind {
    /// `jobKind` in the record.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::BpmnElement => "BPMN_ELEMENT",
            JobKind::ExecutionListener(_) => "EXECUTION_LISTENER",
            JobKind::TaskListener(_) => "TASK_LISTENER",
        }
    }

    /// `jobListenerEventType` in the record.
    pub fn listener_event_type(self) -> &'static str {
        match self {
            JobKind::BpmnElement => "UNSPECIFIED",
            JobKind::ExecutionListener(ExecutionListenerEventType::Start) => "START",
            JobKind::ExecutionListener(ExecutionListenerEventType::End) => "END",
            JobKind::TaskListener(event) => match event {
                TaskListenerEventType::Creating => "CREATING",
                TaskListenerEventType::Assigning => "ASSIGNING",
                TaskListenerEventType::Updating => "UPDATING",
                TaskListenerEventType::Completing => "COMPLETING",
                TaskListenerEventType::Canceling => "CANCELING",
            },
        }
    }
}

/// The incident of a job out of retries, by its `jobKind`.
pub(crate) fn no_retries_error(job_kind: &str) -> ErrorType {
    match job_kind {
        "EXECUTION_LISTENER" => ErrorType::ExecutionListenerNoRetries,
        "TASK_LISTENER" => ErrorType::TaskListenerNoRetries,
        _ => ErrorType::JobNoRetries,
    }
}

/// A job's evaluated type and retries.
pub(crate) fn evaluate(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    job_type: &ExprOrStatic<String>,
    retries: &ExprOrStatic<String>,
) -> Step<(String, i32)> {
    let failed = |failure| Failure::of_evaluation(failure, ErrorType::ExtractValueError);
    let job_type = match job_type {
        ExprOrStatic::Static(text) => text.clone(),
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((Value::String(text), _)) if !text.is_empty() => text.to_string(),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                return Err(extract_value_error(wrong_type(
                    expression, "STRING", &other, &warnings,
                )));
            }
            Err(failure) => return Err(failed(failure)),
        },
    };
    let retries = match retries {
        ExprOrStatic::Static(text) => text.trim().parse::<i32>().map_err(|_| {
            extract_value_error(format!(
                "Expected the job retries of element '{}' to be a number, but was '{text}'",
                bpmn.record.element_id
            ))
        })?,
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((Value::Number(n), _)) => n
                .to_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| {
                    extract_value_error(format!(
                        "Expected the job retries of element '{}' to be a whole number, but was {n}",
                        bpmn.record.element_id
                    ))
                })?,
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                return Err(extract_value_error(wrong_type(
                    expression, "NUMBER", &other, &warnings,
                )));
            }
            Err(failure) => return Err(failed(failure)),
        },
    };
    Ok((job_type, retries))
}

/// Creates a job of the element instance (JOB CREATED), pushed to a job stream when one has
/// room.
pub(crate) fn create(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    kind: JobKind,
    job_type: String,
    retries: i32,
    custom_headers: BTreeMap<String, String>,
) -> Result<(), ProcessingError> {
    let job = JobRecord {
        r#type: job_type,
        worker: String::new(),
        retries,
        deadline: -1,
        retry_backoff: 0,
        recurring_time: -1,
        custom_headers,
        variables: b"{}".to_vec(),
        error_message: String::new(),
        error_code: String::new(),
        bpmn_process_id: bpmn.record.bpmn_process_id.clone(),
        process_definition_version: bpmn.record.version,
        process_definition_key: bpmn.record.process_definition_key,
        process_instance_key: bpmn.record.process_instance_key,
        element_id: bpmn.record.element_id.clone(),
        element_instance_key: bpmn.key,
        tenant_id: bpmn.record.tenant_id.clone(),
        timeout: -1,
        job_kind: kind.name().to_string(),
        job_listener_event_type: kind.listener_event_type().to_string(),
        changed_attributes: Vec::new(),
        result: None,
    };
    let key = bpmn.ctx.next_key()?;
    let slot = bpmn
        .ctx
        .job_push
        .and_then(|streams| streams.reserve(&job.r#type, &job.tenant_id));
    match slot {
        None => {
            bpmn.ctx.append_event(key, JobIntent::Created, job)?;
        }
        Some(slot) => {
            bpmn.ctx
                .append_event(key, JobIntent::Created, job.clone())?;
            push(bpmn.ctx, key, job, slot)?;
        }
    }
    Ok(())
}

/// Activates a just created job for the job stream that reserved room for it (`JOB_BATCH
/// ACTIVATED` with this one job, as a `JOB_BATCH ACTIVATE` would write), and pushes it once the
/// batch is committed.
fn push(
    ctx: &mut ProcessingContext<'_, '_>,
    key: i64,
    mut job: JobRecord,
    slot: Box<dyn PushSlot>,
) -> Result<(), ProcessingError> {
    job.worker = slot.worker().to_owned();
    job.deadline = ctx.now().saturating_add(slot.timeout());
    job.variables = job_variables(ctx, job.element_instance_key, slot.fetch_variables())?;
    if too_large_to_hand_out(ctx, &job) {
        // Left activatable (the slot is given back): its activation raises the incident.
        return Ok(());
    }
    let batch = JobBatchRecord {
        r#type: job.r#type.clone(),
        worker: job.worker.clone(),
        timeout: slot.timeout(),
        max_jobs_to_activate: 1,
        fetch_variables: slot.fetch_variables().to_vec(),
        tenant_ids: vec![job.tenant_id.clone()],
        job_keys: vec![key],
        jobs: vec![job.clone()],
        ..JobBatchRecord::default()
    };
    let batch_key = ctx.next_key()?;
    ctx.append_event(batch_key, JobBatchIntent::Activated, batch)?;
    ctx.output.pushes.push(Push { slot, key, job });
    Ok(())
}

/// Cancels the job of a terminated element, and resolves an incident it may have.
pub(crate) fn cancel(
    ctx: &mut ProcessingContext<'_, '_>,
    job_key: i64,
) -> Result<(), ProcessingError> {
    if job_key <= 0 {
        return Ok(());
    }
    if let Some(incident) = ctx.state().incidents().of_job(job_key)?
        && let Some(record) = ctx.state().incidents().get(incident)?
    {
        ctx.append_event(incident, IncidentIntent::Resolved, record)?;
    }
    if let Some(job) = ctx.state().jobs().get(job_key)? {
        ctx.append_event(job_key, JobIntent::Canceled, job.record())?;
    }
    Ok(())
}
