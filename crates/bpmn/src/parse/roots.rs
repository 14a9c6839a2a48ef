//! Root elements that events reference (`bpmn:message`, `bpmn:error`, `bpmn:signal`,
//! `bpmn:escalation`), and the checks Zeebe makes on them, which depend on who uses them.

use super::builder::{ProcessBuilder, strip_prefix};
use super::errors::Errors;
use super::expressions::Origin;
use crate::model::*;
use crate::xml::{Document, NodeId, Ns};
use std::collections::{HashMap, HashSet};

/// The referenceable root elements of a document, by id.
#[derive(Debug, Default)]
pub(crate) struct Roots {
    messages: HashMap<String, NodeId>,
    errors: HashMap<String, NodeId>,
    signals: HashMap<String, NodeId>,
    escalations: HashMap<String, NodeId>,
}

impl Roots {
    pub(crate) fn collect(doc: &Document, definitions: NodeId) -> Self {
        let mut roots = Roots::default();
        for (node, n) in doc.children(definitions) {
            if n.ns != Ns::Bpmn {
                continue;
            }
            let map = match n.local.as_str() {
                "message" => &mut roots.messages,
                "error" => &mut roots.errors,
                "signal" => &mut roots.signals,
                "escalation" => &mut roots.escalations,
                _ => continue,
            };
            if let Some(id) = n.attr("id") {
                map.entry(id.to_owned()).or_insert(node);
            }
        }
        roots
    }
}

/// How the processes of a document use messages; Zeebe's checks on a message depend on it.
#[derive(Debug, Default)]
pub(crate) struct RootUsage {
    /// Messages referenced by something other than a process-level start event.
    messages_used_elsewhere: HashSet<NodeId>,
    /// Process-level message start events per message.
    message_start_events: HashMap<NodeId, usize>,
}

impl RootUsage {
    /// The checks that need every process: a message may start only one process.
    pub(crate) fn finish(&self, errors: &mut Errors<'_>) {
        let mut starts: Vec<_> = self.message_start_events.iter().collect();
        starts.sort_by_key(|(node, _)| **node);
        for (node, count) in starts {
            if *count > 1 && !self.messages_used_elsewhere.contains(node) {
                errors.add(
                    *node,
                    "A message cannot be referred by more than one start event",
                );
            }
        }
    }
}

/// How an event uses a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MessageUse {
    /// A catching element that correlates: intermediate catch, boundary, receive task,
    /// event sub-process start. Needs a name and a `zeebe:subscription`.
    Correlate,
    /// A process-level start event: needs a name, which must be a constant.
    ProcessStart,
    /// A throwing element: needs a name.
    Throw,
}

impl ProcessBuilder<'_, '_> {
    /// Resolves a `messageRef`, applying Zeebe's checks for the use. `None` if absent or
    /// unresolved (the caller reports "Must reference a message" where Zeebe does).
    pub(super) fn message_ref(
        &mut self,
        reference: Option<&str>,
        use_: MessageUse,
    ) -> Option<MessageRef> {
        let reference = strip_prefix(reference?);
        let node = *self.roots.messages.get(reference)?;
        let n = self.node(node);
        match use_ {
            MessageUse::ProcessStart => {
                *self.usage.message_start_events.entry(node).or_default() += 1;
            }
            _ => {
                self.usage.messages_used_elsewhere.insert(node);
            }
        }
        if n.attr("name").is_none_or(str::is_empty) {
            self.error(node, "Name must be present and not empty");
        }
        let name = match self.name_cache.get(&node) {
            Some(name) => name.clone(),
            None => {
                let origin = Origin {
                    element_id: reference,
                    attribute: "name",
                    position: self.attr_position(node, "name"),
                };
                let raw = n.attr("name").unwrap_or_default();
                let name = self.expressions.classify(raw, origin);
                self.name_cache.insert(node, name.clone());
                name
            }
        };
        if use_ == MessageUse::ProcessStart
            && let ExprOrStatic::Expression(e) = &name
        {
            self.expressions.require_constant(e.id);
        }
        let correlation_key = self.correlation_key(node, reference, use_ == MessageUse::Correlate);
        Some(MessageRef {
            message_id: reference.to_owned(),
            name,
            correlation_key,
        })
    }

    /// The `zeebe:subscription correlationKey` of a message: the key is always an
    /// expression; a correlating use needs exactly one subscription. `None` unless `required`.
    fn correlation_key(
        &mut self,
        message: NodeId,
        message_id: &str,
        required: bool,
    ) -> Option<FeelSource> {
        let subscriptions = self.extensions(message, "subscription");
        if required && subscriptions.len() != 1 {
            self.error(
                message,
                "Must have exactly one zeebe:subscription extension element",
            );
        }
        if let Some(key) = self.correlation_cache.get(&message) {
            return key.clone().filter(|_| required);
        }
        let key = subscriptions.first().and_then(|&s| {
            self.required(s, "correlationKey")?;
            let value = self.value(s, "correlationKey", message_id)?;
            self.expression_only(s, value)
        });
        self.correlation_cache.insert(message, key.clone());
        key.filter(|_| required)
    }

    /// Resolves a `signalRef`; `None` if absent or unresolved.
    pub(super) fn signal_ref(
        &mut self,
        reference: Option<&str>,
        constant: bool,
    ) -> Option<SignalRef> {
        let reference = strip_prefix(reference?);
        let node = *self.roots.signals.get(reference)?;
        let n = self.node(node);
        if n.attr("name").is_none_or(str::is_empty) {
            self.error(node, "Name must be present and not empty");
        }
        let name = match self.name_cache.get(&node) {
            Some(name) => name.clone(),
            None => {
                let origin = Origin {
                    element_id: reference,
                    attribute: "name",
                    position: self.attr_position(node, "name"),
                };
                let name = self
                    .expressions
                    .classify(n.attr("name").unwrap_or_default(), origin);
                self.name_cache.insert(node, name.clone());
                name
            }
        };
        if constant && let ExprOrStatic::Expression(e) = &name {
            self.expressions.require_constant(e.id);
        }
        Some(SignalRef {
            signal_id: reference.to_owned(),
            name,
        })
    }

    /// Resolves an `errorRef`. On a throwing event the code may be an expression and must be
    /// present; on a catching one it must be static.
    pub(super) fn error_ref(
        &mut self,
        definition: NodeId,
        throwing: bool,
        element_id: &str,
    ) -> Option<ErrorRef> {
        let reference = self.node(definition).attr("errorRef").map(strip_prefix);
        let node = reference.and_then(|r| self.roots.errors.get(r).copied());
        let (Some(reference), Some(node)) = (reference, node) else {
            if throwing {
                self.error(definition, "Must reference an error");
            }
            return None;
        };
        let code = self.node(node).attr("errorCode");
        let error_code = if throwing {
            if code.is_none_or(str::is_empty) {
                self.error(definition, "ErrorCode must be present and not empty");
            }
            code.map(|c| {
                let origin = Origin {
                    element_id,
                    attribute: "errorCode",
                    position: self.attr_position(node, "errorCode"),
                };
                self.expressions.classify(c, origin)
            })
        } else {
            if code.is_some_and(|c| c.starts_with('=')) {
                self.error(
                    definition,
                    "The errorCode of the error catch event is not allowed to be an expression",
                );
            }
            code.map(|c| ExprOrStatic::Static(c.to_owned()))
        };
        Some(ErrorRef {
            error_id: reference.to_owned(),
            error_code,
        })
    }

    /// Resolves an `escalationRef`, with the same rules as errors.
    pub(super) fn escalation_ref(
        &mut self,
        definition: NodeId,
        throwing: bool,
        element_id: &str,
    ) -> Option<EscalationRef> {
        let reference = self
            .node(definition)
            .attr("escalationRef")
            .map(strip_prefix);
        let node = reference.and_then(|r| self.roots.escalations.get(r).copied());
        let (Some(reference), Some(node)) = (reference, node) else {
            if throwing {
                self.error(definition, "Must reference an escalation");
            }
            return None;
        };
        let code = self.node(node).attr("escalationCode");
        let escalation_code = if throwing {
            if code.is_none_or(str::is_empty) {
                self.error(node, "EscalationCode must be present and not empty");
            }
            code.map(|c| {
                let origin = Origin {
                    element_id,
                    attribute: "escalationCode",
                    position: self.attr_position(node, "escalationCode"),
                };
                self.expressions.classify(c, origin)
            })
        } else {
            if code.is_some_and(|c| c.starts_with('=')) {
                self.error(
                    definition,
                    "The escalationCode of the escalation catch event is not allowed to be an expression",
                );
            }
            code.map(|c| ExprOrStatic::Static(c.to_owned()))
        };
        Some(EscalationRef {
            escalation_id: reference.to_owned(),
            escalation_code,
        })
    }
}
