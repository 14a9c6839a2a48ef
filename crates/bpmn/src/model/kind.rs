//! Element kinds: what an engine supports or not, named for error messages.

use std::fmt;

macro_rules! element_kinds {
    ($($variant:ident => $name:literal,)*) => {
        /// Every kind of element the parser models: a BPMN element type, refined by its event
        /// definition for events, because an engine typically supports (say) a none end event
        /// long before a compensation end event.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u8)]
        pub enum ElementKind {
            $($variant,)*
        }

        impl ElementKind {
            /// All kinds, in declaration order.
            pub const ALL: &'static [ElementKind] = &[$(ElementKind::$variant,)*];

            /// The human-readable name used in error messages, e.g. `"timer boundary event"`.
            pub fn name(self) -> &'static str {
                match self {
                    $(ElementKind::$variant => $name,)*
                }
            }
        }
    };
}

element_kinds! {
    Process => "process",
    SubProcess => "embedded subprocess",
    EventSubProcess => "event subprocess",
    AdHocSubProcess => "ad-hoc subprocess",
    CallActivity => "call activity",
    Task => "undefined task",
    ManualTask => "manual task",
    ServiceTask => "service task",
    SendTask => "send task",
    ReceiveTask => "receive task",
    UserTask => "user task",
    ScriptTask => "script task",
    BusinessRuleTask => "business rule task",
    ExclusiveGateway => "exclusive gateway",
    InclusiveGateway => "inclusive gateway",
    ParallelGateway => "parallel gateway",
    EventBasedGateway => "event-based gateway",
    NoneStartEvent => "none start event",
    MessageStartEvent => "message start event",
    TimerStartEvent => "timer start event",
    SignalStartEvent => "signal start event",
    ConditionalStartEvent => "conditional start event",
    ErrorStartEvent => "error start event",
    EscalationStartEvent => "escalation start event",
    CompensationStartEvent => "compensation start event",
    NoneEndEvent => "none end event",
    TerminateEndEvent => "terminate end event",
    ErrorEndEvent => "error end event",
    EscalationEndEvent => "escalation end event",
    MessageEndEvent => "message end event",
    SignalEndEvent => "signal end event",
    CompensationEndEvent => "compensation end event",
    MessageIntermediateCatchEvent => "message intermediate catch event",
    TimerIntermediateCatchEvent => "timer intermediate catch event",
    SignalIntermediateCatchEvent => "signal intermediate catch event",
    LinkIntermediateCatchEvent => "link intermediate catch event",
    ConditionalIntermediateCatchEvent => "conditional intermediate catch event",
    NoneIntermediateThrowEvent => "none intermediate throw event",
    MessageIntermediateThrowEvent => "message intermediate throw event",
    SignalIntermediateThrowEvent => "signal intermediate throw event",
    EscalationIntermediateThrowEvent => "escalation intermediate throw event",
    LinkIntermediateThrowEvent => "link intermediate throw event",
    CompensationIntermediateThrowEvent => "compensation intermediate throw event",
    ErrorBoundaryEvent => "error boundary event",
    TimerBoundaryEvent => "timer boundary event",
    MessageBoundaryEvent => "message boundary event",
    SignalBoundaryEvent => "signal boundary event",
    EscalationBoundaryEvent => "escalation boundary event",
    CompensationBoundaryEvent => "compensation boundary event",
    ConditionalBoundaryEvent => "conditional boundary event",
    // Not an element of its own in BPMN, but one in Zeebe's execution (the multi-instance
    // body wraps the activity), and a feature an engine may not have yet.
    MultiInstanceBody => "multi-instance body",
}

impl ElementKind {
    /// Zeebe's `BpmnElementType` name, as records carry it (`bpmnElementType`).
    pub fn zeebe_element_type(self) -> &'static str {
        use ElementKind::*;
        match self {
            Process => "PROCESS",
            SubProcess => "SUB_PROCESS",
            EventSubProcess => "EVENT_SUB_PROCESS",
            AdHocSubProcess => "AD_HOC_SUB_PROCESS",
            CallActivity => "CALL_ACTIVITY",
            Task => "TASK",
            ManualTask => "MANUAL_TASK",
            ServiceTask => "SERVICE_TASK",
            SendTask => "SEND_TASK",
            ReceiveTask => "RECEIVE_TASK",
            UserTask => "USER_TASK",
            ScriptTask => "SCRIPT_TASK",
            BusinessRuleTask => "BUSINESS_RULE_TASK",
            ExclusiveGateway => "EXCLUSIVE_GATEWAY",
            InclusiveGateway => "INCLUSIVE_GATEWAY",
            ParallelGateway => "PARALLEL_GATEWAY",
            EventBasedGateway => "EVENT_BASED_GATEWAY",
            NoneStartEvent
            | MessageStartEvent
            | TimerStartEvent
            | SignalStartEvent
            | ConditionalStartEvent
            | ErrorStartEvent
            | EscalationStartEvent
            | CompensationStartEvent => "START_EVENT",
            NoneEndEvent | TerminateEndEvent | ErrorEndEvent | EscalationEndEvent
            | MessageEndEvent | SignalEndEvent | CompensationEndEvent => "END_EVENT",
            MessageIntermediateCatchEvent
            | TimerIntermediateCatchEvent
            | SignalIntermediateCatchEvent
            | LinkIntermediateCatchEvent
            | ConditionalIntermediateCatchEvent => "INTERMEDIATE_CATCH_EVENT",
            NoneIntermediateThrowEvent
            | MessageIntermediateThrowEvent
            | SignalIntermediateThrowEvent
            | EscalationIntermediateThrowEvent
            | LinkIntermediateThrowEvent
            | CompensationIntermediateThrowEvent => "INTERMEDIATE_THROW_EVENT",
            ErrorBoundaryEvent
            | TimerBoundaryEvent
            | MessageBoundaryEvent
            | SignalBoundaryEvent
            | EscalationBoundaryEvent
            | CompensationBoundaryEvent
            | ConditionalBoundaryEvent => "BOUNDARY_EVENT",
            MultiInstanceBody => "MULTI_INSTANCE_BODY",
        }
    }

    /// Zeebe's `BpmnEventType` name (`bpmnEventType` of records): the event definition of
    /// an event, `UNSPECIFIED` for everything else.
    pub fn zeebe_event_type(self) -> &'static str {
        use ElementKind::*;
        match self {
            NoneStartEvent | NoneEndEvent | NoneIntermediateThrowEvent => "NONE",
            MessageStartEvent
            | MessageEndEvent
            | MessageIntermediateCatchEvent
            | MessageIntermediateThrowEvent
            | MessageBoundaryEvent => "MESSAGE",
            TimerStartEvent | TimerIntermediateCatchEvent | TimerBoundaryEvent => "TIMER",
            SignalStartEvent
            | SignalEndEvent
            | SignalIntermediateCatchEvent
            | SignalIntermediateThrowEvent
            | SignalBoundaryEvent => "SIGNAL",
            ConditionalStartEvent
            | ConditionalIntermediateCatchEvent
            | ConditionalBoundaryEvent => "CONDITIONAL",
            ErrorStartEvent | ErrorEndEvent | ErrorBoundaryEvent => "ERROR",
            EscalationStartEvent
            | EscalationEndEvent
            | EscalationIntermediateThrowEvent
            | EscalationBoundaryEvent => "ESCALATION",
            CompensationStartEvent
            | CompensationEndEvent
            | CompensationIntermediateThrowEvent
            | CompensationBoundaryEvent => "COMPENSATION",
            TerminateEndEvent => "TERMINATE",
            LinkIntermediateCatchEvent | LinkIntermediateThrowEvent => "LINK",
            Process | SubProcess | EventSubProcess | AdHocSubProcess | CallActivity | Task
            | ManualTask | ServiceTask | SendTask | ReceiveTask | UserTask | ScriptTask
            | BusinessRuleTask | ExclusiveGateway | InclusiveGateway | ParallelGateway
            | EventBasedGateway | MultiInstanceBody => "UNSPECIFIED",
        }
    }
}

impl fmt::Display for ElementKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`ElementKind`]s (a bit set; the engine owns the list of what it supports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ElementKindSet(u64);

// One bit per kind must fit.
const _: () = assert!(ElementKind::ALL.len() <= 64);

impl ElementKindSet {
    pub const fn empty() -> Self {
        Self(0)
    }

    pub fn all() -> Self {
        ElementKind::ALL.iter().copied().collect()
    }

    pub fn insert(&mut self, kind: ElementKind) {
        self.0 |= 1 << kind as u8;
    }

    pub fn remove(&mut self, kind: ElementKind) {
        self.0 &= !(1 << kind as u8);
    }

    pub fn contains(&self, kind: ElementKind) -> bool {
        self.0 & (1 << kind as u8) != 0
    }

    pub fn iter(&self) -> impl Iterator<Item = ElementKind> + '_ {
        ElementKind::ALL
            .iter()
            .copied()
            .filter(|k| self.contains(*k))
    }
}

impl FromIterator<ElementKind> for ElementKindSet {
    fn from_iter<I: IntoIterator<Item = ElementKind>>(iter: I) -> Self {
        let mut set = Self::empty();
        for kind in iter {
            set.insert(kind);
        }
        set
    }
}

impl<const N: usize> From<[ElementKind; N]> for ElementKindSet {
    fn from(kinds: [ElementKind; N]) -> Self {
        kinds.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_set_inserts_removes_and_lists_in_order() {
        let mut set = ElementKindSet::from([ElementKind::UserTask, ElementKind::Process]);
        assert!(set.contains(ElementKind::Process));
        assert!(!set.contains(ElementKind::ServiceTask));
        set.insert(ElementKind::MultiInstanceBody);
        set.remove(ElementKind::UserTask);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![ElementKind::Process, ElementKind::MultiInstanceBody]
        );
        assert_eq!(ElementKindSet::all().iter().count(), ElementKind::ALL.len());
    }

    #[test]
    fn zeebe_type_names() {
        assert_eq!(
            ElementKind::TimerBoundaryEvent.zeebe_element_type(),
            "BOUNDARY_EVENT"
        );
        assert_eq!(ElementKind::TimerBoundaryEvent.zeebe_event_type(), "TIMER");
        assert_eq!(
            ElementKind::ServiceTask.zeebe_element_type(),
            "SERVICE_TASK"
        );
        assert_eq!(ElementKind::ServiceTask.zeebe_event_type(), "UNSPECIFIED");
        assert_eq!(ElementKind::NoneStartEvent.zeebe_event_type(), "NONE");
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = ElementKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ElementKind::ALL.len());
    }
}
