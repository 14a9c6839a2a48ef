//! BPMN element processing: the `ACTIVATE_ELEMENT`, `COMPLETE_ELEMENT` and
//! `TERMINATE_ELEMENT` commands of process instances, dispatched by element kind
//! (Zeebe's `BpmnStreamProcessor`).
//!
//! The lifecycle of every element is Zeebe's: ELEMENT_ACTIVATING, ELEMENT_ACTIVATED,
//! ELEMENT_COMPLETING, ELEMENT_COMPLETED (or ELEMENT_TERMINATING, ELEMENT_TERMINATED), with
//! SEQUENCE_FLOW_TAKEN between elements. An incident stops an element in the state it was in;
//! resolving it sends the command again, which continues from there.

pub(crate) mod elements;
pub(crate) mod events;
mod flow;
mod gateways;
mod jobs;
pub(crate) mod subscriptions;
pub(crate) mod timers;
pub(crate) mod variables;

use std::sync::Arc;

use beeline_bpmn::{Element, ElementIndex};
use beeline_protocol::intent::{IncidentIntent, ProcessInstanceIntent};
use beeline_protocol::value::{IncidentRecord, ProcessInstanceRecord};
use beeline_protocol::{Record, RejectionType};

use super::{CommandProcessor, ProcessingContext, Processors, value_of};
use crate::error::ProcessingError;
use crate::model::DeployedProcess;
use crate::state::values::ElementInstance;

pub(super) fn register(processors: &mut Processors) {
    processors.register(ProcessInstanceIntent::ActivateElement, BpmnElementProcessor);
    processors.register(ProcessInstanceIntent::CompleteElement, BpmnElementProcessor);
    processors.register(
        ProcessInstanceIntent::TerminateElement,
        BpmnElementProcessor,
    );
}

/// The outcome of a step that can fail into an incident: `Ok(Err(message))` stops the element
/// with an incident; `Err` is an unexpected failure.
pub(crate) type Step<T> = Result<Result<T, String>, ProcessingError>;

/// Zeebe's incident error types (`ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorType {
    IoMappingError,
    JobNoRetries,
    ConditionError,
    ExtractValueError,
    UnhandledErrorEvent,
    CalledDecisionError,
    DecisionEvaluationError,
}

impl ErrorType {
    pub fn name(self) -> &'static str {
        match self {
            ErrorType::IoMappingError => "IO_MAPPING_ERROR",
            ErrorType::JobNoRetries => "JOB_NO_RETRIES",
            ErrorType::ConditionError => "CONDITION_ERROR",
            ErrorType::ExtractValueError => "EXTRACT_VALUE_ERROR",
            ErrorType::UnhandledErrorEvent => "UNHANDLED_ERROR_EVENT",
            ErrorType::CalledDecisionError => "CALLED_DECISION_ERROR",
            ErrorType::DecisionEvaluationError => "DECISION_EVALUATION_ERROR",
        }
    }
}

/// State values of element instances: the intent of their last lifecycle event.
pub(crate) mod lifecycle {
    use beeline_protocol::intent::ProcessInstanceIntent as I;

    pub const ACTIVATING: u32 = I::ElementActivating as u32;
    pub const ACTIVATED: u32 = I::ElementActivated as u32;
    pub const COMPLETING: u32 = I::ElementCompleting as u32;
    pub const TERMINATING: u32 = I::ElementTerminating as u32;
}

struct BpmnElementProcessor;

impl CommandProcessor for BpmnElementProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessInstanceRecord>(command)?.clone();
        let process = ctx
            .state()
            .processes()
            .deployed(record.process_definition_key)?
            .ok_or_else(|| {
                ProcessingError::Internal(format!(
                    "process definition {} of element instance {} is not deployed",
                    record.process_definition_key, command.key
                ))
            })?;
        let index = process.element(&record.element_id).ok_or_else(|| {
            ProcessingError::Internal(format!(
                "element '{}' is not in process '{}'",
                record.element_id, process.bpmn_process_id
            ))
        })?;
        let mut bpmn = Bpmn {
            ctx,
            command,
            process,
            index,
            key: command.key,
            record,
        };
        match command.intent {
            i if i == ProcessInstanceIntent::ActivateElement.into() => {
                elements::activate(&mut bpmn)
            }
            i if i == ProcessInstanceIntent::CompleteElement.into() => {
                elements::complete(&mut bpmn)
            }
            _ => elements::terminate(&mut bpmn),
        }
    }
}

/// One element instance being processed: the context, the element in its deployed process,
/// and the instance's record.
pub(crate) struct Bpmn<'c, 'a, 's> {
    pub ctx: &'c mut ProcessingContext<'a, 's>,
    pub command: &'c Record,
    pub process: Arc<DeployedProcess>,
    pub index: ElementIndex,
    pub key: i64,
    pub record: ProcessInstanceRecord,
}

impl<'c, 'a, 's> Bpmn<'c, 'a, 's> {
    pub fn element(&self) -> &Element {
        &self.process.model[self.index]
    }

    pub fn instance(&self) -> Result<Option<std::rc::Rc<ElementInstance>>, ProcessingError> {
        Ok(self.ctx.state().element_instances().get(self.key)?)
    }

    /// Writes a lifecycle event of this element instance.
    pub fn write(&mut self, intent: ProcessInstanceIntent) -> Result<usize, ProcessingError> {
        self.ctx.append_event(self.key, intent, self.record.clone())
    }

    /// The record of `index` as a child of the scope `flow_scope_key`.
    pub fn record_of(&self, index: ElementIndex, flow_scope_key: i64) -> ProcessInstanceRecord {
        let element = &self.process.model[index];
        let kind = element.kind();
        ProcessInstanceRecord {
            element_id: element.id.clone(),
            flow_scope_key,
            bpmn_element_type: kind.zeebe_element_type().to_string(),
            bpmn_event_type: kind.zeebe_event_type().to_string(),
            ..self.record.clone()
        }
    }

    /// Starts the element `index` in the scope `flow_scope_key`.
    pub fn activate_element(
        &mut self,
        index: ElementIndex,
        flow_scope_key: i64,
    ) -> Result<(), ProcessingError> {
        let key = self.ctx.next_key()?;
        let record = self.record_of(index, flow_scope_key);
        self.ctx
            .append_command(key, ProcessInstanceIntent::ActivateElement, record);
        Ok(())
    }

    /// Completes this element instance in a follow-up command.
    pub fn complete_self(&mut self) {
        self.ctx.append_command(
            self.key,
            ProcessInstanceIntent::CompleteElement,
            self.record.clone(),
        );
    }

    /// Raises an incident on this element instance; it stays where it is until resolved.
    pub fn incident(
        &mut self,
        error_type: ErrorType,
        message: String,
    ) -> Result<(), ProcessingError> {
        let key = self.ctx.next_key()?;
        let incident = IncidentRecord {
            error_type: error_type.name().to_string(),
            error_message: message,
            bpmn_process_id: self.record.bpmn_process_id.clone(),
            process_definition_key: self.record.process_definition_key,
            process_instance_key: self.record.process_instance_key,
            element_id: self.record.element_id.clone(),
            element_instance_key: self.key,
            job_key: -1,
            variable_scope_key: self.key,
            tenant_id: self.record.tenant_id.clone(),
        };
        self.ctx
            .append_event(key, IncidentIntent::Created, incident)?;
        Ok(())
    }

    /// Rejects the command as not fitting the element instance's state.
    pub fn reject_state(&mut self, what: &str) {
        let command = self.command;
        let reason = format!(
            "Expected to {what} element instance with key '{}' of element '{}', but it is not in a state that allows it",
            self.key, self.record.element_id
        );
        self.ctx
            .reject(command, RejectionType::InvalidState, reason);
    }
}
