//! Elements of the executable process arena and the data they share.

use super::event::{EventDefinition, MessageThrowBehavior};
use super::expression::{ExprOrStatic, FeelSource};
use super::kind::ElementKind;
use super::task::{
    AdHocSubProcess, BusinessRuleTask, CallActivity, FormDefinition, JobWorkerProperties,
    MultiInstance, ReceiveTask, ScriptTask, SendTask, ServiceTask, TaskHeader, UserTask,
};
use super::{ElementIndex, SequenceFlowIndex};
use crate::xml::Position;

/// One flow node (or the process itself, at index 0) of an executable process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub id: String,
    pub name: Option<String>,
    /// The flow scope: the process or sub-process this element is a direct child of. `None`
    /// only for the process. A boundary event's flow scope is that of its activity.
    pub parent: Option<ElementIndex>,
    pub incoming: Vec<SequenceFlowIndex>,
    pub outgoing: Vec<SequenceFlowIndex>,
    /// Activities: the boundary events attached to this activity, in document order.
    pub boundary_events: Vec<ElementIndex>,
    /// The process and sub-processes: what they contain.
    pub scope: Option<FlowScope>,
    /// Activities: multi-instance characteristics.
    pub multi_instance: Option<MultiInstance>,
    /// Activities: `isForCompensation` (a compensation handler).
    pub is_for_compensation: bool,
    pub io_mapping: IoMapping,
    pub execution_listeners: Vec<ExecutionListener>,
    /// `zeebe:properties`, in document order.
    pub properties: Vec<Property>,
    pub position: Position,
    pub data: ElementData,
}

impl Element {
    /// The element's kind, derived from its data.
    pub fn kind(&self) -> ElementKind {
        use ElementKind as K;
        match &self.data {
            ElementData::Process => K::Process,
            ElementData::SubProcess => K::SubProcess,
            ElementData::EventSubProcess => K::EventSubProcess,
            ElementData::AdHocSubProcess(_) => K::AdHocSubProcess,
            ElementData::CallActivity(_) => K::CallActivity,
            ElementData::Task => K::Task,
            ElementData::ManualTask => K::ManualTask,
            ElementData::ServiceTask(_) => K::ServiceTask,
            ElementData::SendTask(_) => K::SendTask,
            ElementData::ReceiveTask(_) => K::ReceiveTask,
            ElementData::UserTask(_) => K::UserTask,
            ElementData::ScriptTask(_) => K::ScriptTask,
            ElementData::BusinessRuleTask(_) => K::BusinessRuleTask,
            ElementData::ExclusiveGateway(_) => K::ExclusiveGateway,
            ElementData::InclusiveGateway(_) => K::InclusiveGateway,
            ElementData::ParallelGateway => K::ParallelGateway,
            ElementData::EventBasedGateway => K::EventBasedGateway,
            ElementData::StartEvent(e) => match e.event {
                EventDefinition::Message(_) => K::MessageStartEvent,
                EventDefinition::Timer(_) => K::TimerStartEvent,
                EventDefinition::Signal(_) => K::SignalStartEvent,
                EventDefinition::Conditional(_) => K::ConditionalStartEvent,
                EventDefinition::Error(_) => K::ErrorStartEvent,
                EventDefinition::Escalation(_) => K::EscalationStartEvent,
                EventDefinition::Compensation(_) => K::CompensationStartEvent,
                // Validation rejects the rest on start events.
                EventDefinition::None | EventDefinition::Link(_) | EventDefinition::Terminate => {
                    K::NoneStartEvent
                }
            },
            ElementData::EndEvent(e) => match e.event {
                EventDefinition::Terminate => K::TerminateEndEvent,
                EventDefinition::Error(_) => K::ErrorEndEvent,
                EventDefinition::Escalation(_) => K::EscalationEndEvent,
                EventDefinition::Message(_) => K::MessageEndEvent,
                EventDefinition::Signal(_) => K::SignalEndEvent,
                EventDefinition::Compensation(_) => K::CompensationEndEvent,
                EventDefinition::None
                | EventDefinition::Timer(_)
                | EventDefinition::Conditional(_)
                | EventDefinition::Link(_) => K::NoneEndEvent,
            },
            ElementData::IntermediateCatchEvent(e) => match e.event {
                EventDefinition::Timer(_) => K::TimerIntermediateCatchEvent,
                EventDefinition::Signal(_) => K::SignalIntermediateCatchEvent,
                EventDefinition::Link(_) => K::LinkIntermediateCatchEvent,
                EventDefinition::Conditional(_) => K::ConditionalIntermediateCatchEvent,
                _ => K::MessageIntermediateCatchEvent,
            },
            ElementData::IntermediateThrowEvent(e) => match e.event {
                EventDefinition::Message(_) => K::MessageIntermediateThrowEvent,
                EventDefinition::Signal(_) => K::SignalIntermediateThrowEvent,
                EventDefinition::Escalation(_) => K::EscalationIntermediateThrowEvent,
                EventDefinition::Link(_) => K::LinkIntermediateThrowEvent,
                EventDefinition::Compensation(_) => K::CompensationIntermediateThrowEvent,
                _ => K::NoneIntermediateThrowEvent,
            },
            ElementData::BoundaryEvent(e) => match e.event {
                EventDefinition::Error(_) => K::ErrorBoundaryEvent,
                EventDefinition::Message(_) => K::MessageBoundaryEvent,
                EventDefinition::Signal(_) => K::SignalBoundaryEvent,
                EventDefinition::Escalation(_) => K::EscalationBoundaryEvent,
                EventDefinition::Compensation(_) => K::CompensationBoundaryEvent,
                EventDefinition::Conditional(_) => K::ConditionalBoundaryEvent,
                _ => K::TimerBoundaryEvent,
            },
        }
    }

    /// The event definition of an event element.
    pub fn event_definition(&self) -> Option<&EventDefinition> {
        match &self.data {
            ElementData::StartEvent(e) => Some(&e.event),
            ElementData::EndEvent(e) => Some(&e.event),
            ElementData::IntermediateCatchEvent(e) => Some(&e.event),
            ElementData::IntermediateThrowEvent(e) => Some(&e.event),
            ElementData::BoundaryEvent(e) => Some(&e.event),
            _ => None,
        }
    }

    pub fn is_activity(&self) -> bool {
        matches!(
            self.data,
            ElementData::SubProcess
                | ElementData::EventSubProcess
                | ElementData::AdHocSubProcess(_)
                | ElementData::CallActivity(_)
                | ElementData::Task
                | ElementData::ManualTask
                | ElementData::ServiceTask(_)
                | ElementData::SendTask(_)
                | ElementData::ReceiveTask(_)
                | ElementData::UserTask(_)
                | ElementData::ScriptTask(_)
                | ElementData::BusinessRuleTask(_)
        )
    }

    /// The job a job-worker element creates, if it is one.
    pub fn job_worker(&self) -> Option<&JobWorkerProperties> {
        match &self.data {
            ElementData::ServiceTask(t) => Some(&t.job_worker),
            ElementData::SendTask(SendTask::JobWorker(j))
            | ElementData::ScriptTask(ScriptTask::JobWorker(j))
            | ElementData::BusinessRuleTask(BusinessRuleTask::JobWorker(j)) => Some(j),
            ElementData::AdHocSubProcess(a) => a.job_worker.as_ref(),
            ElementData::EndEvent(ThrowEvent { event, .. })
            | ElementData::IntermediateThrowEvent(ThrowEvent { event, .. }) => match event {
                EventDefinition::Message(m) => match &m.throw_behavior {
                    Some(MessageThrowBehavior::JobWorker(j)) => Some(j),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }
}

/// What an element is, with the data only that kind has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementData {
    Process,
    SubProcess,
    EventSubProcess,
    AdHocSubProcess(AdHocSubProcess),
    CallActivity(CallActivity),
    /// An undefined task (`bpmn:task`): passes through.
    Task,
    ManualTask,
    ServiceTask(ServiceTask),
    SendTask(SendTask),
    ReceiveTask(ReceiveTask),
    UserTask(UserTask),
    ScriptTask(ScriptTask),
    BusinessRuleTask(BusinessRuleTask),
    ExclusiveGateway(Gateway),
    InclusiveGateway(Gateway),
    ParallelGateway,
    EventBasedGateway,
    StartEvent(StartEvent),
    EndEvent(ThrowEvent),
    IntermediateCatchEvent(CatchEvent),
    IntermediateThrowEvent(ThrowEvent),
    BoundaryEvent(BoundaryEvent),
}

/// Exclusive and inclusive gateways.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gateway {
    /// The `default` flow, taken when no condition is true.
    pub default_flow: Option<SequenceFlowIndex>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartEvent {
    pub event: EventDefinition,
    /// `isInterrupting` (event sub-process start events; `true` elsewhere).
    pub interrupting: bool,
    /// `zeebe:formDefinition` of a process start event.
    pub form: Option<FormDefinition>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatchEvent {
    pub event: EventDefinition,
}

/// End events and intermediate throw events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrowEvent {
    pub event: EventDefinition,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundaryEvent {
    pub event: EventDefinition,
    pub attached_to: ElementIndex,
    /// `cancelActivity` (default `true`): an interrupting boundary event.
    pub cancel_activity: bool,
    /// A compensation boundary event: the handler activity, connected by an association.
    pub compensation_handler: Option<ElementIndex>,
}

/// What a process or sub-process contains, for O(1) access on the engine's hot path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FlowScope {
    /// Direct children, in document order (boundary events included).
    pub children: Vec<ElementIndex>,
    /// Start events directly in this scope (not those of event sub-processes).
    pub start_events: Vec<ElementIndex>,
    /// The none start event, where an instance of the scope starts.
    pub none_start_event: Option<ElementIndex>,
    /// Event sub-processes directly in this scope; each one's start event is the only
    /// entry of its own `start_events`.
    pub event_sub_processes: Vec<ElementIndex>,
}

/// `zeebe:ioMapping`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IoMapping {
    pub inputs: Vec<InputMapping>,
    pub outputs: Vec<OutputMapping>,
}

/// `zeebe:input`: `source` may be static or an expression; without one the target is set
/// to null.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputMapping {
    pub source: Option<ExprOrStatic<String>>,
    /// A variable path, e.g. `order.id`.
    pub target: String,
}

/// `zeebe:output`: the source is always an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputMapping {
    pub source: FeelSource,
    pub target: String,
}

/// `zeebe:property`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionListenerEventType {
    Start,
    End,
}

/// `zeebe:executionListener`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionListener {
    pub event_type: ExecutionListenerEventType,
    pub job_type: ExprOrStatic<String>,
    pub retries: ExprOrStatic<String>,
    pub task_headers: Vec<TaskHeader>,
}

/// A sequence flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceFlow {
    pub id: String,
    pub name: Option<String>,
    pub source: ElementIndex,
    pub target: ElementIndex,
    /// `conditionExpression`: always a FEEL expression.
    pub condition: Option<FeelSource>,
    pub position: Position,
}

/// A form embedded in the process (`zeebe:userTaskForm`), referenced by
/// `formKey="camunda-forms:bpmn:<id>"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTaskForm {
    pub id: String,
    pub body: String,
}

impl ElementData {
    /// The gateway data of exclusive and inclusive gateways.
    pub fn gateway(&self) -> Option<&Gateway> {
        match self {
            ElementData::ExclusiveGateway(g) | ElementData::InclusiveGateway(g) => Some(g),
            _ => None,
        }
    }
}
