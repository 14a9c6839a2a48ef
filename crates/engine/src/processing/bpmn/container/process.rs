//! The process itself (Zeebe's `ProcessProcessor`): the root scope of an instance. It starts
//! at the start event that started it (an event's, or the none start event) and, when it
//! ends, answers a creation that awaits its result and frees the correlation key a message
//! start event held.

use beeline_protocol::intent::{
    ProcessInstanceCreationIntent, ProcessInstanceIntent as PI, ProcessInstanceResultIntent,
};
use beeline_protocol::value::{ProcessInstanceCreationRecord, ProcessInstanceResultRecord};
use beeline_protocol::{Intent, Record, RejectionType};

use super::call_activity;
use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::{events, subscriptions};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Step};
use crate::processing::message::correlate;
use crate::state::document;
use crate::state::values::{CorrelationKeyLock, ElementInstance};

pub(crate) struct ProcessProcessor;

impl ElementProcessor for ProcessProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        subscriptions::open(bpmn)?;
        bpmn.write(PI::ElementActivated)?;
        let process = bpmn.process.clone();
        let started_at = match process.started_by_events() {
            true => events::triggered_start(bpmn.ctx, &process, bpmn.key)?,
            false => None,
        };
        if let Some((key, start)) = started_at {
            let record = bpmn.record_of(start, bpmn.key);
            bpmn.ctx.append_command(key, PI::ActivateElement, record);
            return Ok(());
        }
        super::start_at_none_start_event(bpmn)?;
        Ok(())
    }

    /// The process instance completes: answer a creation that waits for its result.
    fn on_complete(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let awaiting = bpmn
            .ctx
            .state()
            .transient()
            .take_awaiting(bpmn.record.process_instance_key);
        let result = match &awaiting {
            Some(awaiting) => Some(result_variables(bpmn, &awaiting.fetch_variables)?),
            None => None,
        };
        let held = bpmn.ctx.state().messages().correlation_key_of(bpmn.key)?;
        bpmn.write(PI::ElementCompleted)?;
        start_next_buffered(bpmn, held)?;
        if bpmn.record.parent_element_instance_key > 0 {
            call_activity::on_called_process_completed(
                bpmn.ctx,
                bpmn.record.parent_element_instance_key,
            )?;
        }
        if let (Some(awaiting), Some(variables)) = (awaiting, result) {
            let answer = Record::event(
                bpmn.record.process_instance_key,
                ProcessInstanceResultIntent::Completed,
                ProcessInstanceResultRecord {
                    bpmn_process_id: bpmn.record.bpmn_process_id.clone(),
                    process_definition_key: bpmn.record.process_definition_key,
                    version: bpmn.record.version,
                    variables,
                    process_instance_key: bpmn.record.process_instance_key,
                    tenant_id: bpmn.record.tenant_id.clone(),
                    tags: Vec::new(),
                },
            );
            bpmn.ctx.answer(awaiting.request, answer);
        }
        Ok(())
    }

    fn on_terminated(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
        _instance: &ElementInstance,
    ) -> Result<(), ProcessingError> {
        if let Some(awaiting) = bpmn
            .ctx
            .state()
            .transient()
            .take_awaiting(bpmn.record.process_instance_key)
        {
            // The instance will never complete: the waiting request learns it was canceled.
            let mut rejection = Record::rejection(
                bpmn.command,
                RejectionType::InvalidState,
                format!(
                    "Expected to complete process instance with key '{}', but it was terminated",
                    bpmn.record.process_instance_key
                ),
            );
            rejection.intent =
                Intent::from(ProcessInstanceCreationIntent::CreateWithAwaitingResult);
            rejection.value = ProcessInstanceCreationRecord {
                bpmn_process_id: bpmn.record.bpmn_process_id.clone(),
                process_definition_key: bpmn.record.process_definition_key,
                version: bpmn.record.version,
                process_instance_key: bpmn.record.process_instance_key,
                ..Default::default()
            }
            .into();
            bpmn.ctx.answer(awaiting.request, rejection);
        }
        let held = bpmn.ctx.state().messages().correlation_key_of(bpmn.key)?;
        bpmn.write(PI::ElementTerminated)?;
        start_next_buffered(bpmn, held)?;
        if bpmn.record.parent_element_instance_key > 0 {
            call_activity::on_called_process_terminated(
                bpmn.ctx,
                bpmn.record.parent_element_instance_key,
            )?;
        }
        Ok(())
    }
}

/// A process instance that a message started ended and freed its correlation key: the next
/// buffered message with that key may start the next instance.
fn start_next_buffered(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    held: Option<CorrelationKeyLock>,
) -> Result<(), ProcessingError> {
    match held {
        Some(lock) => correlate::start_next_buffered(bpmn.ctx, &lock),
        None => Ok(()),
    }
}

/// The instance's variables (only `fetch` when given), as a JSON object.
fn result_variables(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    fetch: &[String],
) -> Result<Vec<u8>, ProcessingError> {
    let variables = bpmn.ctx.state().variables();
    let scope = bpmn.record.process_instance_key;
    let found = if fetch.is_empty() {
        variables.local(scope)?
    } else {
        let mut found = Vec::new();
        for name in fetch {
            if let Some(variable) = variables.get_local(scope, name)? {
                found.push((name.clone(), variable));
            }
        }
        found
    };
    Ok(document(
        found.iter().map(|(n, v)| (n.as_str(), v.value.as_str())),
    ))
}
