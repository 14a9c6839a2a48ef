//! BPMN element processing (Zeebe's `BpmnStreamProcessor`): the `ACTIVATE_ELEMENT`,
//! `COMPLETE_ELEMENT` and `TERMINATE_ELEMENT` commands of process instances.
//!
//! The lifecycle of every element is Zeebe's: ELEMENT_ACTIVATING, ELEMENT_ACTIVATED,
//! ELEMENT_COMPLETING, ELEMENT_COMPLETED (or ELEMENT_TERMINATING, ELEMENT_TERMINATED), with
//! SEQUENCE_FLOW_TAKEN between elements. An incident stops an element in the state it was in;
//! resolving it sends the command again, which continues from there.
//!
//! `lifecycle.rs` does what every element shares (the lifecycle events, input and output
//! mappings, execution listeners, incidents, closing subscriptions, cancelling jobs). What one kind of element does
//! is its [`ElementProcessor`], one file per kind: `container/` (the process, sub-processes),
//! `task/`, `gateway/` and `event/`. They are built from the behaviours in `behavior/` that
//! kinds share: taking flows, subscriptions, jobs, variables, throwing and catching events.

pub(crate) mod behavior;
mod container;
mod event;
mod gateway;
mod lifecycle;
mod task;

use std::rc::Rc;
use std::sync::Arc;

use beeline_bpmn::{Element, ElementData, ElementIndex};
use beeline_protocol::intent::{IncidentIntent, ProcessInstanceIntent};
use beeline_protocol::value::{IncidentRecord, ProcessInstanceRecord};
use beeline_protocol::{Intent, Record, RejectionType};

use super::{CommandProcessor, ProcessingContext, Processors, value_of};
use crate::error::ProcessingError;
use crate::expression::EvalFailure;
use crate::model::{DeployedProcess, InstanceRole, deployed_element, element_types};
use crate::state::values::ElementInstance;
use behavior::variables::Document;
pub(crate) use container::multi_instance_body::inner_record;

pub(super) fn register(processors: &mut Processors) {
    processors.register(ProcessInstanceIntent::ActivateElement, BpmnStreamProcessor);
    processors.register(ProcessInstanceIntent::CompleteElement, BpmnStreamProcessor);
    processors.register(ProcessInstanceIntent::TerminateElement, BpmnStreamProcessor);
    processors.register(
        ProcessInstanceIntent::CompleteExecutionListener,
        BpmnStreamProcessor,
    );
    processors.register(
        ProcessInstanceIntent::ContinueTerminatingElement,
        BpmnStreamProcessor,
    );
}

/// Why a step of an element's lifecycle did not go on.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The element stops where it is, with an incident a user can resolve.
    Incident(ErrorType, String),
    /// Unexpected: the batch is rolled back and the instance banned.
    Fatal(ProcessingError),
}

/// A step of an element's lifecycle that can stop with an incident.
pub(crate) type Step<T> = Result<T, Failure>;

impl From<ProcessingError> for Failure {
    fn from(error: ProcessingError) -> Self {
        Failure::Fatal(error)
    }
}

impl From<beeline_state::Error> for Failure {
    fn from(error: beeline_state::Error) -> Self {
        Failure::Fatal(error.into())
    }
}

impl Failure {
    /// An expression that failed: an incident of `error_type`, or an unexpected state error.
    pub fn of_evaluation(failure: EvalFailure, error_type: ErrorType) -> Self {
        match failure {
            EvalFailure::Incident(message) => Failure::Incident(error_type, message),
            EvalFailure::State(error) => error.into(),
        }
    }
}

/// Zeebe's incident error types (`ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorType {
    IoMappingError,
    JobNoRetries,
    ExecutionListenerNoRetries,
    TaskListenerNoRetries,
    ConditionError,
    ExtractValueError,
    UnhandledErrorEvent,
    CalledElementError,
    CalledDecisionError,
    DecisionEvaluationError,
    FormNotFound,
    MessageSizeExceeded,
}

impl ErrorType {
    pub fn name(self) -> &'static str {
        match self {
            ErrorType::IoMappingError => "IO_MAPPING_ERROR",
            ErrorType::JobNoRetries => "JOB_NO_RETRIES",
            ErrorType::ExecutionListenerNoRetries => "EXECUTION_LISTENER_NO_RETRIES",
            ErrorType::TaskListenerNoRetries => "TASK_LISTENER_NO_RETRIES",
            ErrorType::ConditionError => "CONDITION_ERROR",
            ErrorType::ExtractValueError => "EXTRACT_VALUE_ERROR",
            ErrorType::UnhandledErrorEvent => "UNHANDLED_ERROR_EVENT",
            ErrorType::CalledElementError => "CALLED_ELEMENT_ERROR",
            ErrorType::CalledDecisionError => "CALLED_DECISION_ERROR",
            ErrorType::DecisionEvaluationError => "DECISION_EVALUATION_ERROR",
            ErrorType::FormNotFound => "FORM_NOT_FOUND",
            ErrorType::MessageSizeExceeded => "MESSAGE_SIZE_EXCEEDED",
        }
    }
}

/// What one kind of element does in its lifecycle (Zeebe's `BpmnElementProcessor`; a container
/// kind is also its children's `BpmnElementContainerProcessor`). The lifecycle around it
/// (`lifecycle.rs`) writes ELEMENT_ACTIVATING, ELEMENT_COMPLETING and ELEMENT_TERMINATING.
pub(crate) trait ElementProcessor: Sync {
    /// The instance is ELEMENT_ACTIVATING and its input mappings are applied: open what it
    /// waits for, write ELEMENT_ACTIVATED and start its work (a job, its first child), or
    /// complete it at once.
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()>;

    /// The variables the element completes with when it computes them itself (a script's
    /// result, a decision's output), instead of those it was given (a job's). Asked before
    /// ELEMENT_COMPLETING, and `again` when the completion is retried after an incident.
    fn completion_result(
        &self,
        _bpmn: &mut BpmnElementContext<'_, '_, '_>,
        _again: bool,
    ) -> Step<Option<Document>> {
        Ok(None)
    }

    /// The instance is ELEMENT_COMPLETING and its output mappings are applied: write
    /// ELEMENT_COMPLETED and leave it (its outgoing flows, or the end of its path).
    fn on_complete(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        behavior::flow::complete_and_leave(bpmn)
    }

    /// The instance is ELEMENT_TERMINATING (its job canceled, its subscriptions closed, its
    /// incidents resolved): end what it runs, its children, the instance it called, its user
    /// task. Returns whether it waits for that to end (its children call back through
    /// [`on_child_terminated`](Self::on_child_terminated)).
    fn on_terminate(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
    ) -> Result<bool, ProcessingError> {
        container::terminate_children(bpmn)
    }

    /// Nothing runs inside the terminating instance any more: write ELEMENT_TERMINATED and
    /// go on where the termination leads (an interrupting boundary event, the flow scope).
    fn on_terminated(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
        instance: &ElementInstance,
    ) -> Result<(), ProcessingError> {
        bpmn.write(ProcessInstanceIntent::ElementTerminated)?;
        let process = bpmn.process.clone();
        if behavior::events::start_waiting_boundary(bpmn.ctx, &process, instance)? {
            return Ok(());
        }
        behavior::flow::after_terminated(bpmn)
    }

    /// Containers: `child`, an instance inside `scope`, is ELEMENT_ACTIVATING (again, when an
    /// incident is resolved), before its input mappings.
    fn on_child_activating(
        &self,
        _child: &mut BpmnElementContext<'_, '_, '_>,
        _scope: &ElementInstance,
    ) -> Step<()> {
        Ok(())
    }

    /// Containers: `child`, an instance inside `scope` without outgoing flows, is about to
    /// complete (the end of a path); a failure leaves it ELEMENT_COMPLETING with an incident.
    /// Returns whether the container's completion condition is fulfilled.
    fn before_path_completed(
        &self,
        _child: &mut BpmnElementContext<'_, '_, '_>,
        _scope: &ElementInstance,
    ) -> Step<bool> {
        Ok(false)
    }

    /// Containers: a path in `scope` ended (`child` completed without outgoing flows), with
    /// what [`before_path_completed`](Self::before_path_completed) decided.
    fn after_path_completed(
        &self,
        child: &mut BpmnElementContext<'_, '_, '_>,
        scope: &ElementInstance,
        _condition_fulfilled: bool,
    ) -> Result<(), ProcessingError> {
        behavior::flow::complete_if_done(child, scope);
        Ok(())
    }

    /// Containers: `child`, an instance inside `scope`, was terminated.
    fn on_child_terminated(
        &self,
        child: &mut BpmnElementContext<'_, '_, '_>,
        scope: &ElementInstance,
    ) -> Result<(), ProcessingError> {
        behavior::flow::continue_after_child_terminated(child, scope)
    }
}

/// The processor of an instance of `element` with `record`: a multi-instance body's, or the
/// processor of the element's kind.
pub(super) fn processor_of(
    element: &Element,
    record: &ProcessInstanceRecord,
) -> &'static dyn ElementProcessor {
    if InstanceRole::of(element, record) == InstanceRole::MultiInstanceBody {
        return &container::multi_instance_body::MultiInstanceBodyProcessor;
    }
    match &element.data {
        ElementData::Process => &container::process::ProcessProcessor,
        ElementData::SubProcess => &container::sub_process::SubProcessProcessor,
        ElementData::EventSubProcess => &container::event_sub_process::EventSubProcessProcessor,
        ElementData::ServiceTask(_) | ElementData::SendTask(_) => {
            &task::job_worker_task::JobWorkerTaskProcessor
        }
        ElementData::ScriptTask(_) => &task::script_task::ScriptTaskProcessor,
        ElementData::BusinessRuleTask(_) => &task::business_rule_task::BusinessRuleTaskProcessor,
        ElementData::ReceiveTask(_) => &task::receive_task::ReceiveTaskProcessor,
        ElementData::Task | ElementData::ManualTask => {
            &task::undefined_task::UndefinedTaskProcessor
        }
        ElementData::ExclusiveGateway(_) => &gateway::exclusive::ExclusiveGatewayProcessor,
        ElementData::InclusiveGateway(_) => &gateway::inclusive::InclusiveGatewayProcessor,
        ElementData::ParallelGateway => &gateway::parallel::ParallelGatewayProcessor,
        ElementData::EventBasedGateway => &gateway::event_based::EventBasedGatewayProcessor,
        ElementData::StartEvent(_) => &event::start_event::StartEventProcessor,
        ElementData::EndEvent(_) => &event::end_event::EndEventProcessor,
        ElementData::IntermediateCatchEvent(_) => {
            &event::intermediate_catch_event::IntermediateCatchEventProcessor
        }
        ElementData::IntermediateThrowEvent(_) => {
            &event::intermediate_throw_event::IntermediateThrowEventProcessor
        }
        ElementData::BoundaryEvent(_) => &event::boundary_event::BoundaryEventProcessor,
        ElementData::CallActivity(_) => &container::call_activity::CallActivityProcessor,
        ElementData::UserTask(_) => &task::user_task::UserTaskProcessor,
        ElementData::AdHocSubProcess(_) => &NotExecuted,
    }
}

/// The processor of `scope`, the container of the instance `bpmn` is processing (its flow
/// scope, in the same process).
pub(crate) fn container_of(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    scope: &ElementInstance,
) -> Result<&'static dyn ElementProcessor, ProcessingError> {
    let record = scope.record.as_ref().ok_or_else(|| {
        ProcessingError::Internal(format!("element instance {} has no record", scope.key))
    })?;
    let index = bpmn.process.element(&record.element_id).ok_or_else(|| {
        ProcessingError::Internal(format!(
            "flow scope '{}' of element instance {} is not in process '{}'",
            record.element_id, bpmn.key, bpmn.process.bpmn_process_id
        ))
    })?;
    Ok(processor_of(&bpmn.process.model[index], record))
}

/// Kinds refused at deployment: an instance of one can only come from a damaged log.
struct NotExecuted;

impl ElementProcessor for NotExecuted {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        Err(Failure::Fatal(ProcessingError::Internal(format!(
            "element '{}' is of a kind ({}) this engine does not execute",
            bpmn.record.element_id,
            bpmn.element().kind()
        ))))
    }
}

/// The element commands of process instances, each handed to the processor of its element's
/// kind through the lifecycle that all kinds share.
struct BpmnStreamProcessor;

impl CommandProcessor for BpmnStreamProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessInstanceRecord>(command)?.clone();
        let (process, index) = deployed_element(ctx.state(), &record)?;
        let element = &process.model[index];
        let processor = processor_of(element, &record);
        let role = InstanceRole::of(element, &record);
        let mut bpmn = BpmnElementContext {
            ctx,
            command,
            process,
            index,
            role,
            key: command.key,
            record,
        };
        match command.intent {
            Intent::ProcessInstance(ProcessInstanceIntent::ActivateElement) => {
                lifecycle::activate(&mut bpmn, processor)
            }
            Intent::ProcessInstance(ProcessInstanceIntent::CompleteElement) => {
                lifecycle::complete(&mut bpmn, processor)
            }
            Intent::ProcessInstance(ProcessInstanceIntent::TerminateElement) => {
                lifecycle::terminate(&mut bpmn, processor)
            }
            Intent::ProcessInstance(ProcessInstanceIntent::CompleteExecutionListener) => {
                lifecycle::listener_completed(&mut bpmn, processor)
            }
            Intent::ProcessInstance(ProcessInstanceIntent::ContinueTerminatingElement) => {
                lifecycle::continue_terminating(&mut bpmn, processor)
            }
            _ => Err(ProcessingError::Internal(format!(
                "{:?} is not an element command",
                command.intent
            ))),
        }
    }
}

/// One element instance being processed (Zeebe's `BpmnElementContext`): the processing
/// context, the element in its deployed process, and the instance's record.
pub(crate) struct BpmnElementContext<'c, 'a, 's> {
    pub ctx: &'c mut ProcessingContext<'a, 's>,
    pub command: &'c Record,
    pub process: Arc<DeployedProcess>,
    pub index: ElementIndex,
    /// Which part of the element the instance is (a multi-instance body, an inner instance).
    pub role: InstanceRole,
    pub key: i64,
    pub record: ProcessInstanceRecord,
}

impl<'c, 'a, 's> BpmnElementContext<'c, 'a, 's> {
    /// The context of `instance`, for a command about something it owns (its user task, a
    /// listener's job) rather than about the instance itself.
    pub fn of_instance(
        ctx: &'c mut ProcessingContext<'a, 's>,
        command: &'c Record,
        instance: &ElementInstance,
    ) -> Result<Self, ProcessingError> {
        let record = instance.record();
        let (process, index) = deployed_element(ctx.state(), &record)?;
        let role = InstanceRole::of(&process.model[index], &record);
        Ok(Self {
            ctx,
            command,
            process,
            index,
            role,
            key: instance.key,
            record,
        })
    }
}

impl BpmnElementContext<'_, '_, '_> {
    pub fn element(&self) -> &Element {
        &self.process.model[self.index]
    }

    pub fn instance(&self) -> Result<Option<Rc<ElementInstance>>, ProcessingError> {
        Ok(self.ctx.state().element_instances().get(self.key)?)
    }

    /// Whether the instance was started by the event it catches (a boundary event, the event
    /// after an event-based gateway, an event sub-process's start): it does not wait for it
    /// again, and completes with the event's variables.
    pub fn triggered(&self) -> Result<bool, ProcessingError> {
        Ok(self
            .instance()?
            .is_some_and(|i| i.completion_variables.is_some()))
    }

    /// Writes a lifecycle event of this element instance.
    pub fn write(&mut self, intent: ProcessInstanceIntent) -> Result<usize, ProcessingError> {
        self.ctx.append_event(self.key, intent, self.record.clone())
    }

    /// The record of `index` as a child of the scope `flow_scope_key` (a multi-instance
    /// activity's body).
    pub fn record_of(&self, index: ElementIndex, flow_scope_key: i64) -> ProcessInstanceRecord {
        let element = &self.process.model[index];
        let (element_type, event_type) = element_types(element);
        ProcessInstanceRecord {
            element_id: element.id.clone(),
            flow_scope_key,
            bpmn_element_type: element_type.to_string(),
            bpmn_event_type: event_type.to_string(),
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

    /// Writes ELEMENT_ACTIVATED and completes the instance in a follow-up command: what
    /// elements that do nothing but pass do.
    pub fn pass_through(&mut self) -> Result<(), ProcessingError> {
        self.write(ProcessInstanceIntent::ElementActivated)?;
        self.complete_self();
        Ok(())
    }

    /// Ends a step: an incident stops the instance where it is until it is resolved.
    pub fn settle(&mut self, step: Step<()>) -> Result<(), ProcessingError> {
        match step {
            Ok(()) => Ok(()),
            Err(Failure::Incident(error_type, message)) => self.incident(error_type, message),
            Err(Failure::Fatal(error)) => Err(error),
        }
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
