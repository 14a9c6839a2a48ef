//! Event definitions, with the root elements they reference (message, error, signal,
//! escalation) resolved and copied in, as Zeebe's `ExecutableMessage` & co. are.

use super::ElementIndex;
use super::expression::{ExprOrStatic, FeelSource};
use super::task::JobWorkerProperties;

/// The event definition of an event element; `None` for none events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventDefinition {
    None,
    Message(MessageEventDefinition),
    Timer(TimerDefinition),
    Error(ErrorEventDefinition),
    Signal(SignalEventDefinition),
    Escalation(EscalationEventDefinition),
    Compensation(CompensationEventDefinition),
    Conditional(ConditionalEventDefinition),
    Link(LinkEventDefinition),
    Terminate,
}

impl EventDefinition {
    /// The BPMN name of the definition type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventDefinition::None => "none",
            EventDefinition::Message(_) => "message",
            EventDefinition::Timer(_) => "timer",
            EventDefinition::Error(_) => "error",
            EventDefinition::Signal(_) => "signal",
            EventDefinition::Escalation(_) => "escalation",
            EventDefinition::Compensation(_) => "compensation",
            EventDefinition::Conditional(_) => "conditional",
            EventDefinition::Link(_) => "link",
            EventDefinition::Terminate => "terminate",
        }
    }
}

/// A `bpmn:message` root element as a catching or throwing event sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRef {
    /// Id of the `bpmn:message` element.
    pub message_id: String,
    /// The message name; a FEEL expression is allowed.
    pub name: ExprOrStatic<String>,
    /// `zeebe:subscription correlationKey`: always an expression; absent for process-level
    /// message start events, which do not correlate.
    pub correlation_key: Option<FeelSource>,
}

/// `zeebe:publishMessage`: a message throw event or send task that publishes the message
/// itself instead of creating a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishMessage {
    pub correlation_key: ExprOrStatic<String>,
    pub message_id: Option<ExprOrStatic<String>>,
    pub time_to_live: Option<ExprOrStatic<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageEventDefinition {
    /// Always present on catch events; a throw event with a job worker may omit it.
    pub message: Option<MessageRef>,
    /// Throw events only: how the message is sent.
    pub throw_behavior: Option<MessageThrowBehavior>,
}

/// How a message throw event (or end event) sends its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageThrowBehavior {
    /// A job worker sends it (`zeebe:taskDefinition` on the event).
    JobWorker(JobWorkerProperties),
    /// The engine publishes it (`zeebe:publishMessage`).
    Publish(PublishMessage),
}

/// A timer: exactly one of the three BPMN timer kinds. The text (ISO 8601, or a FEEL
/// expression) is interpreted by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimerDefinition {
    Duration(ExprOrStatic<String>),
    Date(ExprOrStatic<String>),
    Cycle(ExprOrStatic<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorRef {
    /// Id of the `bpmn:error` element.
    pub error_id: String,
    /// `errorCode`: an expression only on throwing events. `None` on a catch event catches
    /// every error.
    pub error_code: Option<ExprOrStatic<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorEventDefinition {
    /// `None` on a catch event without `errorRef`: catches all errors.
    pub error: Option<ErrorRef>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalRef {
    pub signal_id: String,
    pub name: ExprOrStatic<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalEventDefinition {
    pub signal: SignalRef,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscalationRef {
    pub escalation_id: String,
    /// `escalationCode`: an expression only on throwing events. `None` on a catch event
    /// catches every escalation.
    pub escalation_code: Option<ExprOrStatic<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscalationEventDefinition {
    /// `None` on a catch event without `escalationRef`: catches all escalations.
    pub escalation: Option<EscalationRef>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompensationEventDefinition {
    /// `activityRef` of a throw event: the activity to compensate; `None` compensates the
    /// whole scope.
    pub activity: Option<ElementIndex>,
    /// `waitForCompletion` (Zeebe only supports `true`).
    pub wait_for_completion: bool,
}

/// The variable events a conditional event listens to (`zeebe:conditionalFilter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariableEvent {
    Create,
    Update,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionalEventDefinition {
    /// The `bpmn:condition` text.
    pub condition: ExprOrStatic<String>,
    /// `zeebe:conditionalFilter variableNames`: only changes to these variables trigger an
    /// evaluation; empty means all.
    pub variable_names: Vec<String>,
    /// `zeebe:conditionalFilter variableEvents`; empty means both.
    pub variable_events: Vec<VariableEvent>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkEventDefinition {
    pub name: String,
    /// On a link throw event: the catch event with the same name in the same scope.
    pub catch_event: Option<ElementIndex>,
}
