//! Jobs of job-worker elements (service tasks and the like): created when the element is
//! activated, canceled when it is terminated (Zeebe's `BpmnJobBehavior`).

use std::collections::BTreeMap;

use beeline_bpmn::{ExprOrStatic, JobWorkerProperties};
use beeline_feel::Value;
use beeline_protocol::intent::{IncidentIntent, JobIntent};
use beeline_protocol::value::JobRecord;

use super::variables::eval;
use super::{Bpmn, Step};
use crate::error::ProcessingError;
use crate::expression::{EvalFailure, wrong_type};
use crate::processing::ProcessingContext;

/// The job's evaluated type and retries, or the incident message.
pub(super) fn evaluate(
    bpmn: &Bpmn<'_, '_, '_>,
    properties: &JobWorkerProperties,
) -> Step<(String, i32)> {
    let job_type = match &properties.job_type {
        ExprOrStatic::Static(text) => text.clone(),
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((Value::String(text), _)) if !text.is_empty() => text.to_string(),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                return Ok(Err(wrong_type(expression, "STRING", &other, &warnings)));
            }
            Err(EvalFailure::Incident(message)) => return Ok(Err(message)),
            Err(EvalFailure::State(e)) => return Err(e.into()),
        },
    };
    let retries = match &properties.retries {
        ExprOrStatic::Static(text) => match text.trim().parse::<i32>() {
            Ok(retries) => retries,
            Err(_) => {
                return Ok(Err(format!(
                    "Expected the job retries of element '{}' to be a number, but was '{text}'",
                    bpmn.record.element_id
                )));
            }
        },
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((Value::Number(n), _)) => match n.to_i64().and_then(|n| i32::try_from(n).ok()) {
                Some(retries) => retries,
                None => {
                    return Ok(Err(format!(
                        "Expected the job retries of element '{}' to be a whole number, but was {n}",
                        bpmn.record.element_id
                    )));
                }
            },
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                return Ok(Err(wrong_type(expression, "NUMBER", &other, &warnings)));
            }
            Err(EvalFailure::Incident(message)) => return Ok(Err(message)),
            Err(EvalFailure::State(e)) => return Err(e.into()),
        },
    };
    Ok(Ok((job_type, retries)))
}

/// Creates the element's job (JOB CREATED).
pub(super) fn create(
    bpmn: &mut Bpmn<'_, '_, '_>,
    properties: &JobWorkerProperties,
    job_type: String,
    retries: i32,
) -> Result<(), ProcessingError> {
    let custom_headers: BTreeMap<String, String> = properties
        .task_headers
        .iter()
        .map(|h| (h.key.clone(), h.value.clone()))
        .collect();
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
        job_kind: "BPMN_ELEMENT".to_string(),
        job_listener_event_type: "UNSPECIFIED".to_string(),
        changed_attributes: Vec::new(),
    };
    let key = bpmn.ctx.next_key()?;
    bpmn.ctx.append_event(key, JobIntent::Created, job)?;
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
