//! Collects validation errors against XML nodes, named the way Zeebe names them.

use crate::error::{ValidationError, ValidationErrors};
use crate::xml::{Document, Node, NodeId, Ns};
use std::collections::HashSet;

pub(crate) struct Errors<'d> {
    doc: &'d Document,
    list: Vec<(NodeId, ValidationError)>,
    // A root element (a message, say) is checked once per referencing process; report once.
    seen: HashSet<(NodeId, String)>,
}

impl<'d> Errors<'d> {
    pub(crate) fn new(doc: &'d Document) -> Self {
        Self {
            doc,
            list: Vec::new(),
            seen: HashSet::new(),
        }
    }

    pub(crate) fn add(&mut self, node: NodeId, message: impl Into<String>) {
        let message = message.into();
        if !self.seen.insert((node, message.clone())) {
            return;
        }
        let (element, element_id) = identifier(self.doc, node);
        self.list.push((
            node,
            ValidationError {
                element,
                element_id,
                position: self.doc.node_position(node),
                message,
            },
        ));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The errors in document order (errors of one element stay in the order found).
    pub(crate) fn finish(mut self) -> ValidationErrors {
        self.list
            .sort_by_key(|(node, _)| self.doc.node(*node).offset);
        ValidationErrors(self.list.into_iter().map(|(_, e)| e).collect())
    }
}

/// The id of a BPMN element, if it has a non-empty one.
fn bpmn_id(node: &Node) -> Option<&str> {
    match node.ns {
        Ns::Bpmn => node.attr("id").filter(|id| !id.is_empty()),
        _ => None,
    }
}

/// Zeebe's identifier of an element: its id, or the chain of element names from the closest
/// ancestor with an id (`task > extensionElements > taskDefinition`).
fn identifier(doc: &Document, node: NodeId) -> (String, Option<String>) {
    let mut chain = Vec::new();
    let mut current = Some(node);
    let mut id = None;
    while let Some(n) = current {
        let element = doc.node(n);
        if let Some(found) = bpmn_id(element) {
            chain.push(found);
            id = Some(found.to_owned());
            break;
        }
        chain.push(element.local.as_str());
        current = element.parent;
    }
    chain.reverse();
    (chain.join(" > "), id)
}
