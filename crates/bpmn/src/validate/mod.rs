//! Rules that look at a whole built process: scopes and their start events, sequence flows
//! and gateways, boundary events, compensation, links. Each rule reports against the XML
//! element Zeebe reports it on, with Zeebe's message.

mod activities;
mod duplicates;
mod flows;
mod scopes;
mod unsupported;

pub(crate) use unsupported::unsupported_elements;

use crate::model::{ElementIndex, SequenceFlowIndex};
use crate::parse::{Draft, Errors};
use crate::xml::NodeId;

/// Runs every whole-process rule.
pub(crate) fn process(draft: &Draft, errors: &mut Errors<'_>) {
    let mut check = Check { draft, errors };
    scopes::check(&mut check);
    flows::check(&mut check);
    activities::check(&mut check);
}

/// A draft and the error collector, with the lookups the rules share.
pub(crate) struct Check<'a, 'd> {
    pub draft: &'a Draft,
    pub errors: &'a mut Errors<'d>,
}

impl Check<'_, '_> {
    fn element_node(&self, index: ElementIndex) -> Option<NodeId> {
        self.draft.element_nodes.get(index.index()).copied()
    }

    fn flow_node(&self, index: SequenceFlowIndex) -> Option<NodeId> {
        self.draft.flow_nodes.get(index.index()).copied()
    }

    fn event_definition_node(&self, index: ElementIndex) -> Option<NodeId> {
        self.draft
            .event_definition_nodes
            .get(index.index())
            .copied()
            .flatten()
    }

    fn on_element(&mut self, index: ElementIndex, message: impl Into<String>) {
        if let Some(node) = self.element_node(index) {
            self.errors.add(node, message);
        }
    }

    fn on_flow(&mut self, index: SequenceFlowIndex, message: impl Into<String>) {
        if let Some(node) = self.flow_node(index) {
            self.errors.add(node, message);
        }
    }

    /// On the event definition, or the event if it has none.
    fn on_event_definition(&mut self, index: ElementIndex, message: impl Into<String>) {
        match self.event_definition_node(index) {
            Some(node) => self.errors.add(node, message),
            None => self.on_element(index, message),
        }
    }
}
