//! From XML to validated [`Definitions`].

mod activities;
mod builder;
mod errors;
mod events;
mod expressions;
mod extensions;
mod flow_nodes;
mod names;
mod roots;

pub(crate) use builder::Draft;
pub(crate) use errors::Errors;
#[cfg(test)]
pub(crate) use extensions::{IGNORED_ZEEBE_ATTRIBUTES, ZEEBE_ELEMENTS};

use crate::error::ParseError;
use crate::model::Definitions;
use crate::xml::{self, Document, NodeId, Ns};
use builder::ProcessBuilder;
use roots::{RootUsage, Roots};
use std::collections::HashMap;
use std::sync::Arc;

/// Parses and validates a BPMN document.
pub fn parse(input: &[u8]) -> Result<Definitions, ParseError> {
    let doc = xml::parse(input)?;
    let mut errors = Errors::new(&doc);
    let root = doc.root();
    let root_node = doc.node(root);
    if !root_node.is_bpmn("definitions") {
        errors.add(
            root,
            format!(
                "Expected the root element 'definitions' in namespace '{}', found '{}'",
                xml::BPMN_NS,
                root_node.local
            ),
        );
        return Err(ParseError::Invalid(errors.finish()));
    }
    unique_ids(&doc, &mut errors);
    unknown_root_elements(&doc, root, &mut errors);

    let roots = Roots::collect(&doc, root);
    let mut usage = RootUsage::default();
    let mut drafts = Vec::new();
    let mut non_executable_process_ids = Vec::new();
    for process in doc.children_named(root, Ns::Bpmn, "process") {
        let n = doc.node(process);
        let executable = n
            .attr("isExecutable")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if !executable {
            // Zeebe neither deploys nor validates processes that are not executable.
            non_executable_process_ids.push(n.attr("id").unwrap_or_default().to_owned());
            continue;
        }
        let draft = ProcessBuilder::new(&doc, &roots, &mut usage, &mut errors).build(process);
        crate::validate::process(&draft, &mut errors);
        drafts.push(draft);
    }
    usage.finish(&mut errors);
    if drafts.is_empty() {
        errors.add(root, "Must contain at least one executable process");
    }
    if !errors.is_empty() {
        return Err(ParseError::Invalid(errors.finish()));
    }
    Ok(Definitions {
        id: root_node.attr("id").map(str::to_owned),
        processes: drafts
            .into_iter()
            .map(|draft| Arc::new(draft.process))
            .collect(),
        non_executable_process_ids,
    })
}

/// Ids are XML ids: unique in the whole document, diagram elements included.
fn unique_ids(doc: &Document, errors: &mut Errors<'_>) {
    let mut first: HashMap<&str, NodeId> = HashMap::new();
    for (node, n) in doc.all() {
        if !matches!(n.ns, Ns::Bpmn | Ns::BpmnDi) {
            continue;
        }
        let Some(id) = n.attr("id").filter(|id| !id.is_empty()) else {
            continue;
        };
        if let Some(&previous) = first.get(id) {
            let line = doc.node_position(previous).line;
            errors.add(
                node,
                format!("The id '{id}' is not unique, it is already used at line {line}"),
            );
        } else {
            first.insert(id, node);
        }
    }
}

/// BPMN-namespace elements under `definitions` that BPMN does not define (a typo, a wrong
/// case) would be silently ignored otherwise.
fn unknown_root_elements(doc: &Document, root: NodeId, errors: &mut Errors<'_>) {
    for (node, n) in doc.children(root) {
        if n.ns == Ns::Bpmn && !names::is_known_root_element(&n.local) {
            errors.add(
                node,
                format!("Element 'bpmn:{}' is not a BPMN element", n.local),
            );
        }
    }
}
