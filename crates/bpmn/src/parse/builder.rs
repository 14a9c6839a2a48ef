//! Builds the arena of one executable process from its XML, reporting what it cannot use.
//!
//! Elements are created in document order (pre-order, the process first); sequence flows
//! and references between elements (default flows, attached boundary events, compensation
//! handlers, link targets) are resolved in a second pass, once every id is known.
//! Elements with errors are still built, with placeholder data where something required is
//! missing, so every later rule still runs and all problems are reported at once; a model
//! with errors is never returned.

use super::errors::Errors;
use super::expressions::{ExpressionTable, Origin};
use super::names;
use super::roots::{RootUsage, Roots};
use crate::model::*;
use crate::xml::{Document, Node, NodeId, Ns, Position};
use std::collections::HashMap;

/// A built process with the XML node behind each element and flow, for the rules that
/// look at the whole process and must report against the right element.
pub(crate) struct Draft {
    pub process: Process,
    pub element_nodes: Vec<NodeId>,
    pub flow_nodes: Vec<NodeId>,
    /// The event definition element of each event, if it has one.
    pub event_definition_nodes: Vec<Option<NodeId>>,
    /// Association source and target ids (compensation handlers are attached by them).
    pub associations: Vec<(String, String)>,
}

pub(crate) struct ProcessBuilder<'d, 'e> {
    pub(super) doc: &'d Document,
    pub(super) roots: &'d Roots,
    pub(super) usage: &'e mut RootUsage,
    pub(super) errors: &'e mut Errors<'d>,
    pub(super) expressions: ExpressionTable,
    pub(super) elements: Vec<Element>,
    pub(super) element_nodes: Vec<NodeId>,
    pub(super) event_definition_nodes: Vec<Option<NodeId>>,
    flows: Vec<SequenceFlow>,
    flow_nodes: Vec<NodeId>,
    ids: HashMap<String, ElementRef>,
    pending_flows: Vec<(NodeId, ElementIndex)>,
    pub(super) pending_defaults: Vec<(ElementIndex, NodeId, String)>,
    pub(super) pending_attachments: Vec<(ElementIndex, NodeId, String)>,
    pub(super) pending_compensations: Vec<(ElementIndex, NodeId, String)>,
    associations: Vec<(String, String)>,
    /// Cache of message/signal names per root element, so a message used by several events
    /// has one expression in the table.
    pub(super) name_cache: HashMap<NodeId, ExprOrStatic<String>>,
    pub(super) correlation_cache: HashMap<NodeId, Option<FeelSource>>,
}

impl<'d, 'e> ProcessBuilder<'d, 'e> {
    pub(crate) fn new(
        doc: &'d Document,
        roots: &'d Roots,
        usage: &'e mut RootUsage,
        errors: &'e mut Errors<'d>,
    ) -> Self {
        Self {
            doc,
            roots,
            usage,
            errors,
            expressions: ExpressionTable::default(),
            elements: Vec::new(),
            element_nodes: Vec::new(),
            event_definition_nodes: Vec::new(),
            flows: Vec::new(),
            flow_nodes: Vec::new(),
            ids: HashMap::new(),
            pending_flows: Vec::new(),
            pending_defaults: Vec::new(),
            pending_attachments: Vec::new(),
            pending_compensations: Vec::new(),
            associations: Vec::new(),
            name_cache: HashMap::new(),
            correlation_cache: HashMap::new(),
        }
    }

    // ---- small helpers shared by the element readers -------------------------------------

    pub(super) fn node(&self, id: NodeId) -> &'d Node {
        self.doc.node(id)
    }

    pub(super) fn error(&mut self, node: NodeId, message: impl Into<String>) {
        self.errors.add(node, message);
    }

    pub(super) fn position(&self, node: NodeId) -> Position {
        self.doc.node_position(node)
    }

    pub(super) fn attr_position(&self, node: NodeId, attr: &str) -> Position {
        match self.node(node).attr_node(attr) {
            Some(a) => self.doc.position(a.offset),
            None => self.position(node),
        }
    }

    /// BPMN children of `node` with this local name.
    pub(super) fn bpmn_children(&self, node: NodeId, local: &'static str) -> Vec<NodeId> {
        self.doc.children_named(node, Ns::Bpmn, local).collect()
    }

    /// Classifies an attribute of `node` as expression or static value.
    pub(super) fn value(
        &mut self,
        node: NodeId,
        attr: &'static str,
        element_id: &str,
    ) -> Option<ExprOrStatic<String>> {
        let raw = self.node(node).attr(attr)?;
        let origin = Origin {
            element_id,
            attribute: attr,
            position: self.attr_position(node, attr),
        };
        Some(self.expressions.classify(raw, origin))
    }

    /// The text content of `node` (trimmed, as Zeebe reads expressions and timers),
    /// classified.
    pub(super) fn text_value(
        &mut self,
        node: NodeId,
        element_id: &str,
        name: &'static str,
    ) -> ExprOrStatic<String> {
        let origin = Origin {
            element_id,
            attribute: name,
            position: self.position(node),
        };
        let text = self.node(node).text.trim();
        self.expressions.classify(text, origin)
    }

    /// An attribute that must be present and not empty (Zeebe's `hasNonEmptyAttribute`).
    pub(super) fn required(&mut self, node: NodeId, attr: &'static str) -> Option<&'d str> {
        match self.node(node).attr(attr) {
            Some(v) if !v.is_empty() => Some(v),
            _ => {
                self.error(
                    node,
                    format!("Attribute '{attr}' must be present and not empty"),
                );
                None
            }
        }
    }

    /// Zeebe's `isNonStatic`: the value must be an expression.
    pub(super) fn expression_only(
        &mut self,
        node: NodeId,
        value: ExprOrStatic<String>,
    ) -> Option<FeelSource> {
        match value {
            ExprOrStatic::Expression(e) => Some(e),
            ExprOrStatic::Static(s) => {
                self.error(node, super::expressions::expected_expression(&s));
                None
            }
        }
    }

    pub(super) fn bool_attr(&self, node: NodeId, attr: &str, default: bool) -> bool {
        match self.node(node).attr(attr) {
            Some(v) => v.trim().eq_ignore_ascii_case("true"),
            None => default,
        }
    }

    fn register(&mut self, id: &str, target: ElementRef) {
        if !id.is_empty() {
            // The first element keeps the id; duplicates are reported for the whole document.
            self.ids.entry(id.to_owned()).or_insert(target);
        }
    }

    fn index_of(&self) -> ElementIndex {
        ElementIndex(u32::try_from(self.elements.len()).unwrap_or(u32::MAX))
    }

    // ---- the process and its scopes ------------------------------------------------------

    pub(crate) fn build(mut self, node: NodeId) -> Draft {
        let n = self.node(node);
        let id = self.element_id(node);
        let root = Element {
            id: id.clone(),
            name: n.attr("name").map(str::to_owned),
            parent: None,
            incoming: Vec::new(),
            outgoing: Vec::new(),
            boundary_events: Vec::new(),
            scope: Some(FlowScope::default()),
            multi_instance: None,
            is_for_compensation: false,
            io_mapping: IoMapping::default(),
            execution_listeners: Vec::new(),
            properties: Vec::new(),
            position: self.position(node),
            data: ElementData::Process,
        };
        self.elements.push(root);
        self.element_nodes.push(node);
        self.event_definition_nodes.push(None);
        self.register(&id, ElementRef::Element(ElementIndex::PROCESS));

        let version_tag = self.version_tag(node);
        let job_priority = self.process_job_priority(node, &id);
        let user_task_forms = self.user_task_forms(node);
        let properties = self.properties(node);
        let listeners = self.execution_listeners(node, &id, ElementIndex::PROCESS);
        if let Some(root) = self.elements.first_mut() {
            root.properties = properties;
            root.execution_listeners = listeners;
        }

        self.scope_children(node, ElementIndex::PROCESS);
        self.sequence_flows();
        self.resolve_references();

        let process = Process {
            bpmn_process_id: id,
            name: n.attr("name").map(str::to_owned),
            version_tag,
            job_priority,
            user_task_forms,
            elements: self.elements,
            sequence_flows: self.flows,
            ids: self.ids,
            expressions: self.expressions.into_entries(),
        };
        Draft {
            process,
            element_nodes: self.element_nodes,
            flow_nodes: self.flow_nodes,
            event_definition_nodes: self.event_definition_nodes,
            associations: self.associations,
        }
    }

    /// The `id` of a BPMN element; reports a missing one.
    pub(super) fn element_id(&mut self, node: NodeId) -> String {
        match self.node(node).attr("id") {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => {
                self.error(node, "Element id must be present and not empty.");
                String::new()
            }
        }
    }

    /// Reads the flow elements of a process or sub-process.
    pub(super) fn scope_children(&mut self, scope_node: NodeId, scope: ElementIndex) {
        let children: Vec<(NodeId, &'d Node)> = self.doc.children(scope_node).collect();
        for (child, n) in children {
            if n.ns != Ns::Bpmn {
                // Other vendors' elements are accepted and ignored.
                continue;
            }
            match n.local.as_str() {
                "sequenceFlow" => self.pending_flows.push((child, scope)),
                "association" => {
                    if let (Some(source), Some(target)) = (n.attr("sourceRef"), n.attr("targetRef"))
                    {
                        self.associations
                            .push((strip_prefix(source).into(), strip_prefix(target).into()));
                    }
                }
                local if is_flow_node(local) => self.flow_node(child, scope),
                local => {
                    if let Some(java_name) = names::unsupported_flow_element(local) {
                        self.error(
                            child,
                            format!(
                                "Elements of type '{java_name}' are currently not supported. \
                                 Please refer to the documentation for a list of supported \
                                 elements: https://docs.camunda.io/docs/components/modeler/\
                                 bpmn/bpmn-coverage/"
                            ),
                        );
                        self.placeholder(child, scope, local == "transaction");
                    } else if !names::is_ignored_process_child(local) {
                        self.error(
                            child,
                            format!("Element 'bpmn:{local}' is not a BPMN element"),
                        );
                    }
                }
            }
        }
    }

    /// An element Zeebe rejects, kept in the arena so flows that touch it still resolve and
    /// no unrelated error is reported.
    fn placeholder(&mut self, node: NodeId, scope: ElementIndex, is_scope: bool) {
        let data = if is_scope {
            ElementData::SubProcess
        } else {
            ElementData::ParallelGateway
        };
        let index = self.new_element(node, scope, data);
        if is_scope {
            self.open_scope(node, index);
        }
        self.add_to_scope(scope, index);
    }

    /// Creates an element with the attributes every flow node has; kind-specific data is
    /// filled in by the caller.
    pub(super) fn new_element(
        &mut self,
        node: NodeId,
        scope: ElementIndex,
        data: ElementData,
    ) -> ElementIndex {
        let index = self.index_of();
        let id = self.element_id(node);
        self.register(&id, ElementRef::Element(index));
        self.elements.push(Element {
            id,
            name: self.node(node).attr("name").map(str::to_owned),
            parent: Some(scope),
            incoming: Vec::new(),
            outgoing: Vec::new(),
            boundary_events: Vec::new(),
            scope: None,
            multi_instance: None,
            is_for_compensation: false,
            io_mapping: IoMapping::default(),
            execution_listeners: Vec::new(),
            properties: Vec::new(),
            position: self.position(node),
            data,
        });
        self.element_nodes.push(node);
        self.event_definition_nodes.push(None);
        index
    }

    /// Makes `index` a scope and reads its children.
    pub(super) fn open_scope(&mut self, node: NodeId, index: ElementIndex) {
        if let Some(e) = self.elements.get_mut(index.index()) {
            e.scope = Some(FlowScope::default());
        }
        self.scope_children(node, index);
    }

    /// Records a new child in its scope's lookup lists.
    pub(super) fn add_to_scope(&mut self, scope: ElementIndex, child: ElementIndex) {
        let (is_start, is_none_start, is_event_sub_process) = match self.elements.get(child.index())
        {
            Some(e) => (
                matches!(e.data, ElementData::StartEvent(_)),
                matches!(
                    e.data,
                    ElementData::StartEvent(StartEvent {
                        event: EventDefinition::None,
                        ..
                    })
                ),
                matches!(e.data, ElementData::EventSubProcess),
            ),
            None => return,
        };
        if let Some(flow_scope) = self
            .elements
            .get_mut(scope.index())
            .and_then(|e| e.scope.as_mut())
        {
            flow_scope.children.push(child);
            if is_start {
                flow_scope.start_events.push(child);
            }
            if is_none_start && flow_scope.none_start_event.is_none() {
                flow_scope.none_start_event = Some(child);
            }
            if is_event_sub_process {
                flow_scope.event_sub_processes.push(child);
            }
        }
    }

    // ---- second pass: sequence flows and references --------------------------------------

    fn sequence_flows(&mut self) {
        for (node, scope) in std::mem::take(&mut self.pending_flows) {
            let id = self.element_id(node);
            let n = self.node(node);
            let source = self.flow_end(node, "sourceRef");
            let target = self.flow_end(node, "targetRef");
            let condition = self
                .bpmn_children(node, "conditionExpression")
                .first()
                .copied()
                .and_then(|c| {
                    let value = self.text_value(c, &id, "conditionExpression");
                    self.expression_only(c, value)
                });
            // Zeebe reads execution listeners on any element; a flow cannot have them.
            self.reject_listeners_on(node, "sequenceFlow");
            let (Some(source), Some(target)) = (source, target) else {
                continue;
            };
            let same_scope = |i: ElementIndex| {
                self.elements.get(i.index()).and_then(|e| e.parent) == Some(scope)
            };
            if !same_scope(source) || !same_scope(target) {
                self.error(
                    node,
                    "Sequence flows must connect elements of the (sub-)process that contains them",
                );
            }
            let index = SequenceFlowIndex(u32::try_from(self.flows.len()).unwrap_or(u32::MAX));
            self.register(&id, ElementRef::SequenceFlow(index));
            self.flows.push(SequenceFlow {
                id,
                name: n.attr("name").map(str::to_owned),
                source,
                target,
                condition,
                position: self.position(node),
            });
            self.flow_nodes.push(node);
            if let Some(e) = self.elements.get_mut(source.index()) {
                e.outgoing.push(index);
            }
            if let Some(e) = self.elements.get_mut(target.index()) {
                e.incoming.push(index);
            }
        }
    }

    /// Resolves `sourceRef` or `targetRef` of a sequence flow to a flow node.
    fn flow_end(&mut self, node: NodeId, attr: &'static str) -> Option<ElementIndex> {
        let Some(reference) = self
            .node(node)
            .attr(attr)
            .map(str::trim)
            .filter(|r| !r.is_empty())
        else {
            self.error(
                node,
                format!("Attribute '{attr}' must be present and not empty"),
            );
            return None;
        };
        match self.ids.get(strip_prefix(reference)) {
            Some(ElementRef::Element(index)) if *index != ElementIndex::PROCESS => Some(*index),
            _ => {
                self.error(
                    node,
                    format!("Attribute '{attr}' must reference a valid flow node"),
                );
                None
            }
        }
    }

    fn resolve_references(&mut self) {
        for (gateway, node, reference) in std::mem::take(&mut self.pending_defaults) {
            let flow = match self.ids.get(strip_prefix(&reference)) {
                Some(ElementRef::SequenceFlow(flow)) => Some(*flow),
                _ => None,
            };
            let starts_here = flow
                .and_then(|f| self.flows.get(f.index()))
                .is_some_and(|f| f.source == gateway);
            if !starts_here {
                self.error(node, "Default flow must start at gateway");
                continue;
            }
            if let Some(ElementData::ExclusiveGateway(g) | ElementData::InclusiveGateway(g)) =
                self.elements.get_mut(gateway.index()).map(|e| &mut e.data)
            {
                g.default_flow = flow;
            }
        }

        for (event, node, reference) in std::mem::take(&mut self.pending_attachments) {
            let activity = match self.ids.get(strip_prefix(&reference)) {
                Some(ElementRef::Element(a))
                    if self
                        .elements
                        .get(a.index())
                        .is_some_and(Element::is_activity) =>
                {
                    *a
                }
                _ => {
                    self.error(node, "Must be attached to an activity");
                    continue;
                }
            };
            if let Some(ElementData::BoundaryEvent(b)) =
                self.elements.get_mut(event.index()).map(|e| &mut e.data)
            {
                b.attached_to = activity;
            }
            if let Some(a) = self.elements.get_mut(activity.index()) {
                a.boundary_events.push(event);
            }
        }

        for (event, node, reference) in std::mem::take(&mut self.pending_compensations) {
            let activity = match self.ids.get(strip_prefix(&reference)) {
                Some(ElementRef::Element(a))
                    if self
                        .elements
                        .get(a.index())
                        .is_some_and(Element::is_activity) =>
                {
                    *a
                }
                _ => {
                    self.error(
                        node,
                        format!("The referenced compensation activity '{reference}' doesn't exist"),
                    );
                    continue;
                }
            };
            if let Some(EventDefinition::Compensation(c)) = self
                .elements
                .get_mut(event.index())
                .and_then(event_definition_mut)
            {
                c.activity = Some(activity);
            }
        }

        self.resolve_compensation_handlers();
        self.resolve_link_targets();
    }

    /// A compensation boundary event's handler is the target of the association leaving it.
    fn resolve_compensation_handlers(&mut self) {
        for index in 0..self.elements.len() {
            let Some(element) = self.elements.get(index) else {
                continue;
            };
            let ElementData::BoundaryEvent(BoundaryEvent {
                event: EventDefinition::Compensation(_),
                ..
            }) = element.data
            else {
                continue;
            };
            let handler = self
                .associations
                .iter()
                .find(|(source, _)| *source == element.id)
                .and_then(|(_, target)| match self.ids.get(target) {
                    Some(ElementRef::Element(h)) => Some(*h),
                    _ => None,
                });
            if let Some(ElementData::BoundaryEvent(b)) =
                self.elements.get_mut(index).map(|e| &mut e.data)
            {
                b.compensation_handler = handler;
            }
        }
    }

    /// A link throw event jumps to the link catch event with its name in its scope.
    fn resolve_link_targets(&mut self) {
        let mut catches: HashMap<(Option<ElementIndex>, String), ElementIndex> = HashMap::new();
        for (i, e) in (0u32..).zip(&self.elements) {
            if let ElementData::IntermediateCatchEvent(CatchEvent {
                event: EventDefinition::Link(link),
            }) = &e.data
            {
                catches
                    .entry((e.parent, link.name.clone()))
                    .or_insert(ElementIndex(i));
            }
        }
        for e in &mut self.elements {
            let parent = e.parent;
            if let ElementData::IntermediateThrowEvent(ThrowEvent {
                event: EventDefinition::Link(link),
            }) = &mut e.data
            {
                link.catch_event = catches.get(&(parent, link.name.clone())).copied();
            }
        }
    }
}

fn event_definition_mut(e: &mut Element) -> Option<&mut EventDefinition> {
    match &mut e.data {
        ElementData::StartEvent(s) => Some(&mut s.event),
        ElementData::EndEvent(t) | ElementData::IntermediateThrowEvent(t) => Some(&mut t.event),
        ElementData::IntermediateCatchEvent(c) => Some(&mut c.event),
        ElementData::BoundaryEvent(b) => Some(&mut b.event),
        _ => None,
    }
}

/// References are QNames in BPMN (`tns:Message_1`); ids cannot contain `:`.
pub(super) fn strip_prefix(reference: &str) -> &str {
    let reference = reference.trim();
    reference
        .rsplit_once(':')
        .map_or(reference, |(_, local)| local)
}

fn is_flow_node(local: &str) -> bool {
    matches!(
        local,
        "startEvent"
            | "endEvent"
            | "intermediateCatchEvent"
            | "intermediateThrowEvent"
            | "boundaryEvent"
            | "task"
            | "serviceTask"
            | "sendTask"
            | "receiveTask"
            | "userTask"
            | "manualTask"
            | "scriptTask"
            | "businessRuleTask"
            | "callActivity"
            | "subProcess"
            | "adHocSubProcess"
            | "exclusiveGateway"
            | "inclusiveGateway"
            | "parallelGateway"
            | "eventBasedGateway"
    )
}
