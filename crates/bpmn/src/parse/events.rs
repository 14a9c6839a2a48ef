//! Events and their event definitions.

use super::builder::ProcessBuilder;
use super::names;
use super::roots::MessageUse;
use crate::model::*;
use crate::xml::{NodeId, Ns};

/// Where an event definition sits; it decides which rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    ProcessStart,
    EventSubProcessStart {
        interrupting: bool,
    },
    /// A start event of an embedded or ad-hoc sub-process (rejected later unless none).
    OtherStart,
    IntermediateCatch,
    Boundary {
        interrupting: bool,
    },
    IntermediateThrow,
    End,
}

impl Role {
    fn is_throwing(self) -> bool {
        matches!(self, Role::IntermediateThrow | Role::End)
    }
}

impl ProcessBuilder<'_, '_> {
    /// The event definition children of an event; unsupported types are reported.
    fn event_definition_nodes(&mut self, node: NodeId) -> Vec<NodeId> {
        let mut result = Vec::new();
        for (child, n) in self.doc.children(node).collect::<Vec<_>>() {
            if n.ns != Ns::Bpmn {
                continue;
            }
            match names::event_definition(&n.local) {
                Some(true) => result.push(child),
                Some(false) => {
                    self.error(child, "Event definition of this type is not supported");
                    result.push(child);
                }
                None => {}
            }
        }
        result
    }

    /// Reads the first event definition of the event at `index` and remembers its node.
    fn first_event_definition(
        &mut self,
        index: ElementIndex,
        definitions: &[NodeId],
        role: Role,
        node: NodeId,
        id: &str,
    ) -> EventDefinition {
        let Some(&def) = definitions.first() else {
            return EventDefinition::None;
        };
        if let Some(slot) = self.event_definition_nodes.get_mut(index.index()) {
            *slot = Some(def);
        }
        self.event_definition(def, role, node, index, id)
    }

    pub(super) fn start_event(
        &mut self,
        node: NodeId,
        index: ElementIndex,
        scope: ElementIndex,
        id: &str,
    ) -> StartEvent {
        let definitions = self.event_definition_nodes(node);
        if definitions.len() > 1 {
            self.error(node, "Start event can't have more than one type");
        }
        let interrupting = self.bool_attr(node, "isInterrupting", true);
        let role = match self.elements.get(scope.index()).map(|e| &e.data) {
            Some(ElementData::Process) => Role::ProcessStart,
            Some(ElementData::EventSubProcess) => Role::EventSubProcessStart { interrupting },
            _ => Role::OtherStart,
        };
        let event = self.first_event_definition(index, &definitions, role, node, id);
        if role == Role::ProcessStart
            && !matches!(
                event,
                EventDefinition::None
                    | EventDefinition::Message(_)
                    | EventDefinition::Timer(_)
                    | EventDefinition::Signal(_)
                    | EventDefinition::Conditional(_)
            )
        {
            self.error(
                node,
                "Start events of a process must be one of: none, message, timer, signal or conditional",
            );
        }
        let public_access = self
            .properties(node)
            .iter()
            .any(|p| p.name == "publicAccess" && p.value.trim().eq_ignore_ascii_case("true"));
        if public_access {
            self.error(
                node,
                "Start event forms with public access enabled are not supported",
            );
        }
        let form = self.form_definition(node, id, false, false);
        StartEvent {
            event,
            interrupting,
            form,
        }
    }

    /// End events (`end`) and intermediate throw events.
    pub(super) fn throw_event(
        &mut self,
        node: NodeId,
        index: ElementIndex,
        id: &str,
        end: bool,
    ) -> ThrowEvent {
        let definitions = self.event_definition_nodes(node);
        if definitions.len() > 1 {
            self.error(node, "Must have at most one event definition");
        }
        self.extension(node, "taskDefinition", true);
        let role = if end {
            Role::End
        } else {
            Role::IntermediateThrow
        };
        let event = self.first_event_definition(index, &definitions, role, node, id);
        let unsupported_type = if end {
            matches!(
                event,
                EventDefinition::Timer(_)
                    | EventDefinition::Conditional(_)
                    | EventDefinition::Link(_)
            )
        } else {
            matches!(
                event,
                EventDefinition::Timer(_)
                    | EventDefinition::Conditional(_)
                    | EventDefinition::Error(_)
                    | EventDefinition::Terminate
            )
        };
        let cancel = definitions
            .first()
            .is_some_and(|&d| self.node(d).local == "cancelEventDefinition");
        if unsupported_type || cancel {
            self.error(
                node,
                if end {
                    "End events must be one of: none, error, message, terminate, signal, escalation or compensation"
                } else {
                    "Intermediate throw events must be one of: none, message, signal, escalation, link or compensation"
                },
            );
        }
        ThrowEvent { event }
    }

    pub(super) fn catch_event(
        &mut self,
        node: NodeId,
        index: ElementIndex,
        id: &str,
    ) -> CatchEvent {
        let definitions = self.event_definition_nodes(node);
        let event =
            self.first_event_definition(index, &definitions, Role::IntermediateCatch, node, id);
        if definitions.len() != 1 {
            self.error(node, "Must have exactly one event definition");
        } else if !matches!(
            event,
            EventDefinition::Message(_)
                | EventDefinition::Timer(_)
                | EventDefinition::Signal(_)
                | EventDefinition::Link(_)
                | EventDefinition::Conditional(_)
        ) || self.is_cancel(&definitions)
        {
            self.error(
                node,
                "Event definition must be one of: message, timer, signal, link or conditional",
            );
        }
        CatchEvent { event }
    }

    pub(super) fn boundary_event(
        &mut self,
        node: NodeId,
        index: ElementIndex,
        id: &str,
    ) -> BoundaryEvent {
        let cancel_activity = self.bool_attr(node, "cancelActivity", true);
        match self.node(node).attr("attachedToRef") {
            Some(reference) => self
                .pending_attachments
                .push((index, node, reference.to_owned())),
            None => self.error(node, "Must be attached to an activity"),
        }
        let definitions = self.event_definition_nodes(node);
        let role = Role::Boundary {
            interrupting: cancel_activity,
        };
        let event = self.first_event_definition(index, &definitions, role, node, id);
        if definitions.len() != 1 {
            self.error(node, "Must have exactly one event definition");
        }
        let supported = matches!(
            event,
            EventDefinition::Timer(_)
                | EventDefinition::Message(_)
                | EventDefinition::Error(_)
                | EventDefinition::Signal(_)
                | EventDefinition::Escalation(_)
                | EventDefinition::Compensation(_)
                | EventDefinition::Conditional(_)
        );
        if !definitions.is_empty() && (!supported || self.is_cancel(&definitions)) {
            self.error(
                node,
                "Boundary events must be one of: timer, message, error, signal, escalation, conditional",
            );
        }
        BoundaryEvent {
            event,
            attached_to: ElementIndex::PROCESS,
            cancel_activity,
            compensation_handler: None,
        }
    }

    fn is_cancel(&self, definitions: &[NodeId]) -> bool {
        definitions
            .first()
            .is_some_and(|&d| self.node(d).local == "cancelEventDefinition")
    }

    /// One event definition. `node` is the event element.
    fn event_definition(
        &mut self,
        def: NodeId,
        role: Role,
        node: NodeId,
        index: ElementIndex,
        id: &str,
    ) -> EventDefinition {
        let local = self.node(def).local.as_str();
        let definition = match local {
            "messageEventDefinition" => self.message_definition(def, role, node, id),
            "timerEventDefinition" => self.timer_definition(def, role, node, id),
            "errorEventDefinition" => EventDefinition::Error(ErrorEventDefinition {
                error: self.error_ref(def, role.is_throwing(), id),
            }),
            "signalEventDefinition" => {
                let reference = self.node(def).attr("signalRef");
                match self.signal_ref(reference, role == Role::ProcessStart) {
                    Some(signal) => EventDefinition::Signal(SignalEventDefinition { signal }),
                    None => {
                        self.error(def, "Must reference a signal");
                        EventDefinition::Signal(SignalEventDefinition {
                            signal: SignalRef {
                                signal_id: String::new(),
                                name: ExprOrStatic::Static(String::new()),
                            },
                        })
                    }
                }
            }
            "escalationEventDefinition" => EventDefinition::Escalation(EscalationEventDefinition {
                escalation: self.escalation_ref(def, role.is_throwing(), id),
            }),
            "compensateEventDefinition" => self.compensation_definition(def, role, index),
            "conditionalEventDefinition" => self.conditional_definition(def, id),
            "linkEventDefinition" => {
                let name = self.node(def).attr("name").unwrap_or_default();
                if name.is_empty() {
                    self.error(def, "Link name must be present and not empty.");
                }
                EventDefinition::Link(LinkEventDefinition {
                    name: name.to_owned(),
                    catch_event: None,
                })
            }
            "terminateEventDefinition" => EventDefinition::Terminate,
            // cancelEventDefinition: reported as unsupported already.
            _ => EventDefinition::None,
        };
        self.non_interrupting_rules(&definition, role, node);
        definition
    }

    /// Zeebe's `verifyEventDefinition`: which types may be non-interrupting, and no cycle on
    /// interrupting timers. Reported on the event sub-process or boundary event.
    fn non_interrupting_rules(&mut self, definition: &EventDefinition, role: Role, node: NodeId) {
        let (interrupting, target) = match role {
            Role::Boundary { interrupting } => (interrupting, node),
            Role::EventSubProcessStart { interrupting } => match self.node(node).parent {
                Some(sub_process) => (interrupting, sub_process),
                None => return,
            },
            _ => return,
        };
        let may_be_non_interrupting = matches!(
            definition,
            EventDefinition::Message(_)
                | EventDefinition::Timer(_)
                | EventDefinition::Signal(_)
                | EventDefinition::Escalation(_)
                | EventDefinition::Conditional(_)
        );
        if !interrupting && !may_be_non_interrupting {
            self.error(target, "Non-Interrupting event of this type is not allowed");
        }
        if interrupting
            && matches!(
                definition,
                EventDefinition::Timer(TimerDefinition::Cycle(_))
            )
        {
            self.error(
                target,
                "Interrupting timer event with time cycle is not allowed.",
            );
        }
    }

    fn message_definition(
        &mut self,
        def: NodeId,
        role: Role,
        node: NodeId,
        id: &str,
    ) -> EventDefinition {
        let reference = self.node(def).attr("messageRef");
        if !role.is_throwing() {
            let use_ = if role == Role::ProcessStart {
                MessageUse::ProcessStart
            } else {
                MessageUse::Correlate
            };
            let message = self.message_ref(reference, use_);
            if message.is_none() {
                self.error(def, "Must reference a message");
            }
            return EventDefinition::Message(MessageEventDefinition {
                message: Some(message.unwrap_or_else(super::activities::placeholder_message)),
                throw_behavior: None,
            });
        }
        let publish = self.extensions(def, "publishMessage");
        let definitions = self.extensions(node, "taskDefinition");
        let one_of = (publish.len() == 1 && definitions.is_empty())
            || (publish.is_empty() && definitions.len() == 1);
        let message = self.message_ref(reference, MessageUse::Throw);
        if !one_of {
            self.error(
                node,
                "Must have either one 'zeebe:publishMessage' or one 'zeebe:taskDefinition' extension element",
            );
        } else if definitions.is_empty() && message.is_none() {
            self.error(node, "Must reference a message");
        }
        let behavior = match (definitions.first(), publish.first()) {
            (Some(&d), _) => MessageThrowBehavior::JobWorker(self.job_worker(node, Some(d), id)),
            (None, Some(&p)) => MessageThrowBehavior::Publish(self.publish_message(p, id)),
            (None, None) => MessageThrowBehavior::JobWorker(self.job_worker(node, None, id)),
        };
        EventDefinition::Message(MessageEventDefinition {
            message,
            throw_behavior: Some(behavior),
        })
    }

    fn timer_definition(
        &mut self,
        def: NodeId,
        role: Role,
        node: NodeId,
        id: &str,
    ) -> EventDefinition {
        let date = self.bpmn_children(def, "timeDate");
        let duration = self.bpmn_children(def, "timeDuration");
        let cycle = self.bpmn_children(def, "timeCycle");
        if date.len() + duration.len() + cycle.len() != 1 {
            self.error(
                def,
                "Must be exactly one type of timer: timeDuration, timeDate or timeCycle",
            );
        }
        if role == Role::IntermediateCatch && date.is_empty() && duration.is_empty() {
            self.error(
                node,
                "Intermediate timer catch event must have either a time duration or a time date.",
            );
        }
        let timer = if let Some(&d) = duration.first() {
            TimerDefinition::Duration(self.text_value(d, id, "timeDuration"))
        } else if let Some(&d) = date.first() {
            TimerDefinition::Date(self.text_value(d, id, "timeDate"))
        } else if let Some(&c) = cycle.first() {
            TimerDefinition::Cycle(self.text_value(c, id, "timeCycle"))
        } else {
            TimerDefinition::Duration(ExprOrStatic::Static(String::new()))
        };
        EventDefinition::Timer(timer)
    }

    fn compensation_definition(
        &mut self,
        def: NodeId,
        role: Role,
        index: ElementIndex,
    ) -> EventDefinition {
        if let Some(reference) = self.node(def).attr("activityRef").filter(|r| !r.is_empty()) {
            self.pending_compensations
                .push((index, def, reference.to_owned()));
        }
        let wait = self.node(def).attr("waitForCompletion");
        let wait_for_completion = wait.is_none_or(|w| w.trim().eq_ignore_ascii_case("true"));
        if !wait_for_completion {
            match role {
                Role::End => self.error(
                    def,
                    "A compensation end event waitForCompletion attribute must be true or not present",
                ),
                Role::IntermediateThrow => self.error(
                    def,
                    "A compensation intermediate throwing event waitForCompletion attribute must be true or not present",
                ),
                _ => {}
            }
        }
        EventDefinition::Compensation(CompensationEventDefinition {
            activity: None,
            wait_for_completion,
        })
    }

    fn conditional_definition(&mut self, def: NodeId, id: &str) -> EventDefinition {
        let condition = match self.bpmn_children(def, "condition").first() {
            None => {
                self.error(def, "Must have a condition");
                ExprOrStatic::Static(String::new())
            }
            Some(&c) => {
                if self.node(c).text.trim().is_empty() {
                    self.error(c, "Attribute 'condition' must be present and not empty");
                }
                self.text_value(c, id, "condition")
            }
        };
        let mut variable_names = Vec::new();
        let mut variable_events = Vec::new();
        if let Some(filter) = self.extension(def, "conditionalFilter", false) {
            let n = self.node(filter);
            if let Some(events) = n.attr("variableEvents").filter(|e| !e.trim().is_empty()) {
                for event in events.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                    match event {
                        "create" => variable_events.push(VariableEvent::Create),
                        "update" => variable_events.push(VariableEvent::Update),
                        other => self.error(
                            filter,
                            format!(
                                "Variable event '{other}' is not valid. Must be one of: create, \
                                 update or a comma-separated list of both."
                            ),
                        ),
                    }
                }
            }
            if let Some(names) = n.attr("variableNames").filter(|v| !v.trim().is_empty()) {
                for name in names.split(',').map(str::trim) {
                    if name.is_empty() {
                        self.error(
                            filter,
                            format!(
                                "Variable names must not contain empty names but '{names}' given. \
                                 Please provide a comma-separated list of variable names without \
                                 empty entries."
                            ),
                        );
                    } else if name.starts_with('=') {
                        self.error(
                            filter,
                            format!(
                                "Variable names must be static and cannot be expressions. \
                                 '{name}' starts with '='."
                            ),
                        );
                    } else {
                        variable_names.push(name.to_owned());
                    }
                }
            }
        }
        EventDefinition::Conditional(ConditionalEventDefinition {
            condition,
            variable_names,
            variable_events,
        })
    }
}
