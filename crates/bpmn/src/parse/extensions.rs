//! Readers for Zeebe's extension elements (`zeebe:*` inside `bpmn:extensionElements`),
//! with the checks Zeebe makes on each.

use super::builder::ProcessBuilder;
use super::expressions;
use crate::model::*;
use crate::xml::{NodeId, Ns};

/// Header keys with this prefix are reserved for the engine (Zeebe's
/// `Protocol.RESERVED_HEADER_NAME_PREFIX`).
const RESERVED_HEADER_PREFIX: &str = "io.camunda.zeebe:";

/// The elements that may have execution listeners, in Zeebe's order (its error message
/// lists them like this).
const ELEMENTS_WITH_EXECUTION_LISTENERS: &[&str] = &[
    "process",
    "subProcess",
    "callActivity",
    "adHocSubProcess",
    "task",
    "sendTask",
    "serviceTask",
    "scriptTask",
    "userTask",
    "receiveTask",
    "businessRuleTask",
    "manualTask",
    "startEvent",
    "intermediateThrowEvent",
    "intermediateCatchEvent",
    "boundaryEvent",
    "endEvent",
    "exclusiveGateway",
    "inclusiveGateway",
    "parallelGateway",
    "eventBasedGateway",
];

/// Every `zeebe:` element the parser reads, with the attributes it reads. A test checks
/// this list against Zeebe's moddle descriptor (the checklist of what Zeebe models use).
#[cfg(test)]
pub(crate) const ZEEBE_ELEMENTS: &[(&str, &[&str])] = &[
    ("taskDefinition", &["type", "retries"]),
    ("taskHeaders", &[]),
    ("header", &["key", "value"]),
    ("ioMapping", &[]),
    ("input", &["source", "target"]),
    ("output", &["source", "target"]),
    ("subscription", &["correlationKey"]),
    (
        "publishMessage",
        &["correlationKey", "messageId", "timeToLive"],
    ),
    (
        "loopCharacteristics",
        &[
            "inputCollection",
            "inputElement",
            "outputCollection",
            "outputElement",
        ],
    ),
    (
        "calledElement",
        &[
            "processId",
            "propagateAllChildVariables",
            "propagateAllParentVariables",
            "businessId",
            "bindingType",
            "versionTag",
        ],
    ),
    (
        "calledDecision",
        &["decisionId", "resultVariable", "bindingType", "versionTag"],
    ),
    ("script", &["expression", "resultVariable"]),
    ("userTask", &[]),
    (
        "formDefinition",
        &[
            "formKey",
            "formId",
            "externalReference",
            "bindingType",
            "versionTag",
        ],
    ),
    ("userTaskForm", &["id"]),
    (
        "assignmentDefinition",
        &["assignee", "candidateGroups", "candidateUsers"],
    ),
    ("taskSchedule", &["dueDate", "followUpDate"]),
    ("priorityDefinition", &["priority"]),
    ("jobPriorityDefinition", &["priority"]),
    ("taskListeners", &[]),
    ("taskListener", &["eventType", "type", "retries"]),
    ("executionListeners", &[]),
    ("executionListener", &["eventType", "type", "retries"]),
    ("properties", &[]),
    ("property", &["name", "value"]),
    ("versionTag", &["value"]),
    ("linkedResources", &[]),
    (
        "linkedResource",
        &[
            "resourceId",
            "resourceType",
            "linkName",
            "bindingType",
            "versionTag",
        ],
    ),
    (
        "adHoc",
        &[
            "activeElementsCollection",
            "outputCollection",
            "outputElement",
        ],
    ),
    ("conditionalFilter", &["variableNames", "variableEvents"]),
    ("agentDefinition", &["agentType"]),
];

/// `zeebe:` attributes accepted and deliberately not used: modeler bookkeeping (element
/// templates), an id Zeebe does not read, an attribute Zeebe itself ignores.
#[cfg(test)]
pub(crate) const IGNORED_ZEEBE_ATTRIBUTES: &[(&str, &str)] = &[
    ("header", "id"),
    ("calledElement", "processIdExpression"),
    ("input", "modelerConfigurationTemplate"),
    ("input", "modelerConfigurationName"),
    ("property", "modelerConfigurationTemplate"),
    ("property", "modelerConfigurationName"),
    ("<bpmn element>", "modelerTemplate"),
    ("<bpmn element>", "modelerTemplateVersion"),
    ("<bpmn element>", "modelerTemplateIcon"),
    ("<bpmn element>", "retryCounter"),
];

impl<'d> ProcessBuilder<'d, '_> {
    /// All `zeebe:<local>` extension elements of `node`.
    pub(super) fn extensions(&self, node: NodeId, local: &'static str) -> Vec<NodeId> {
        self.doc
            .children_named(node, Ns::Bpmn, "extensionElements")
            .flat_map(|ext| self.doc.children_named(ext, Ns::Zeebe, local))
            .collect()
    }

    /// The first `zeebe:<local>`. With `unique`, more than one is an error, as in Zeebe's
    /// `ExtensionElementsDuplicationValidator` for that element type.
    pub(super) fn extension(
        &mut self,
        node: NodeId,
        local: &'static str,
        unique: bool,
    ) -> Option<NodeId> {
        let all = self.extensions(node, local);
        if unique && all.len() > 1 {
            self.error(
                node,
                format!(
                    "Must have exactly one 'zeebe:{local}' extension element when exists. \
                     Please check process definition XML and retain only one extension element."
                ),
            );
        }
        all.first().copied()
    }

    /// `zeebe:taskDefinition`: job type and retries (default `"3"`).
    pub(super) fn task_definition(
        &mut self,
        ext: NodeId,
        element_id: &str,
    ) -> (ExprOrStatic<String>, ExprOrStatic<String>) {
        let job_type = match self.required(ext, "type") {
            Some(_) => self.value(ext, "type", element_id),
            None => None,
        };
        let retries = match self.node(ext).attr("retries") {
            None => Some(ExprOrStatic::Static("3".to_owned())),
            Some(_) => match self.required(ext, "retries") {
                Some(_) => self.value(ext, "retries", element_id),
                None => None,
            },
        };
        (
            job_type.unwrap_or_else(|| ExprOrStatic::Static(String::new())),
            retries.unwrap_or_else(|| ExprOrStatic::Static("3".to_owned())),
        )
    }

    /// A job worker element's job: task definition, headers, priority, linked resources.
    pub(super) fn job_worker(
        &mut self,
        node: NodeId,
        task_definition: Option<NodeId>,
        element_id: &str,
    ) -> JobWorkerProperties {
        let (job_type, retries) = match task_definition {
            Some(def) => self.task_definition(def, element_id),
            None => (
                ExprOrStatic::Static(String::new()),
                ExprOrStatic::Static("3".to_owned()),
            ),
        };
        let task_headers = self.task_headers(node);
        let job_priority = self
            .extension(node, "jobPriorityDefinition", false)
            .and_then(|p| self.job_priority(p, element_id));
        let linked_resources = self.linked_resources(node);
        JobWorkerProperties {
            job_type,
            retries,
            task_headers,
            job_priority,
            linked_resources,
        }
    }

    /// The `zeebe:taskHeaders` of an element (at most one).
    pub(super) fn task_headers(&mut self, node: NodeId) -> Vec<TaskHeader> {
        match self.extension(node, "taskHeaders", true) {
            Some(headers) => self.headers(headers),
            None => Vec::new(),
        }
    }

    fn headers(&mut self, headers: NodeId) -> Vec<TaskHeader> {
        let mut result: Vec<TaskHeader> = Vec::new();
        let mut duplicates: Vec<String> = Vec::new();
        for header in self.doc.children_named(headers, Ns::Zeebe, "header") {
            let n = self.node(header);
            let key = n.attr("key").unwrap_or_default().to_owned();
            let value = n.attr("value").unwrap_or_default().to_owned();
            if key.starts_with(RESERVED_HEADER_PREFIX) {
                self.error(
                    headers,
                    format!(
                        "Attribute 'key' contains '{key}', but header keys starting with \
                         '{RESERVED_HEADER_PREFIX}' are reserved for internal use."
                    ),
                );
            }
            if result.iter().any(|h| h.key == key) && !duplicates.contains(&key) {
                duplicates.push(key.clone());
            }
            result.push(TaskHeader { key, value });
        }
        for key in duplicates {
            self.error(
                headers,
                format!("Headers contain duplicate entries for key '{key}'"),
            );
        }
        result
    }

    /// `zeebe:jobPriorityDefinition priority`: a literal integer or an expression.
    pub(super) fn job_priority(
        &mut self,
        ext: NodeId,
        element_id: &str,
    ) -> Option<ExprOrStatic<i32>> {
        let raw = self.required(ext, "priority")?;
        match self.value(ext, "priority", element_id)? {
            ExprOrStatic::Expression(e) => Some(ExprOrStatic::Expression(e)),
            ExprOrStatic::Static(s) => match s.parse::<i32>() {
                Ok(p) => Some(ExprOrStatic::Static(p)),
                Err(_) => {
                    self.error(
                        ext,
                        format!(
                            "Expected 'priority' to be a literal integer or a FEEL expression \
                             (starting with '='), but got '{raw}'."
                        ),
                    );
                    None
                }
            },
        }
    }

    fn linked_resources(&mut self, node: NodeId) -> Vec<LinkedResource> {
        let mut result = Vec::new();
        for list in self.extensions(node, "linkedResources") {
            for resource in self
                .doc
                .children_named(list, Ns::Zeebe, "linkedResource")
                .collect::<Vec<_>>()
            {
                let resource_id = self.required(resource, "resourceId");
                let resource_type = self.required(resource, "resourceType");
                let (binding_type, version_tag) = self.binding(resource);
                result.push(LinkedResource {
                    resource_id: resource_id.unwrap_or_default().to_owned(),
                    resource_type: resource_type.unwrap_or_default().to_owned(),
                    link_name: self.node(resource).attr("linkName").map(str::to_owned),
                    binding_type,
                    version_tag,
                });
            }
        }
        result
    }

    /// `bindingType` and `versionTag`, checked as Zeebe's `ZeebeBindingTypeValidator` does.
    pub(super) fn binding(&mut self, ext: NodeId) -> (BindingType, Option<String>) {
        let n = self.node(ext);
        let raw = n.attr("bindingType");
        let binding_type = match raw {
            None => BindingType::Latest,
            Some(value) => BindingType::parse(value).unwrap_or_else(|| {
                self.error(
                    ext,
                    format!(
                        "Attribute 'bindingType' must be one of: {}",
                        BindingType::NAMES.join(", ")
                    ),
                );
                BindingType::Latest
            }),
        };
        let version_tag = n
            .attr("versionTag")
            .filter(|v| !v.trim().is_empty())
            .map(str::to_owned);
        if raw == Some("versionTag") && version_tag.is_none() {
            self.error(
                ext,
                "Attribute 'versionTag' must be present and not empty if 'bindingType' is 'versionTag'",
            );
        } else if raw != Some("versionTag") && version_tag.is_some() {
            self.error(
                ext,
                "Attribute 'versionTag' may only be used if 'bindingType' is 'versionTag'",
            );
        }
        (binding_type, version_tag)
    }

    /// `zeebe:ioMapping`.
    pub(super) fn io_mapping(&mut self, node: NodeId, element_id: &str) -> IoMapping {
        let Some(mapping) = self.extension(node, "ioMapping", true) else {
            return IoMapping::default();
        };
        let mut result = IoMapping::default();
        let inputs: Vec<NodeId> = self
            .doc
            .children_named(mapping, Ns::Zeebe, "input")
            .collect();
        for input in inputs {
            let source = self.value(input, "source", element_id);
            let target = self.path(input);
            result.inputs.push(InputMapping { source, target });
        }
        let outputs: Vec<NodeId> = self
            .doc
            .children_named(mapping, Ns::Zeebe, "output")
            .collect();
        for output in outputs {
            let source = match self.value(output, "source", element_id) {
                Some(value) => self.expression_only(output, value),
                None => {
                    self.error(output, "Expected expression but not found.");
                    None
                }
            };
            let target = self.path(output);
            if let Some(source) = source {
                result.outputs.push(OutputMapping { source, target });
            }
        }
        result
    }

    /// The `target` of a mapping: a variable path.
    fn path(&mut self, node: NodeId) -> String {
        let target = self.node(node).attr("target").unwrap_or_default();
        for message in expressions::path_errors(target) {
            self.error(node, message);
        }
        target.to_owned()
    }

    /// `zeebe:properties`, in document order.
    pub(super) fn properties(&mut self, node: NodeId) -> Vec<Property> {
        self.extensions(node, "properties")
            .into_iter()
            .flat_map(|p| self.doc.children_named(p, Ns::Zeebe, "property"))
            .map(|p| {
                let n = self.node(p);
                Property {
                    name: n.attr("name").unwrap_or_default().to_owned(),
                    value: n.attr("value").unwrap_or_default().to_owned(),
                }
            })
            .collect()
    }

    /// Rejects `zeebe:executionListeners` on an element that cannot have them.
    pub(super) fn reject_listeners_on(&mut self, node: NodeId, local: &str) {
        for listeners in self.extensions(node, "executionListeners") {
            if self
                .doc
                .children_named(listeners, Ns::Zeebe, "executionListener")
                .next()
                .is_some()
            {
                self.error(
                    listeners,
                    format!(
                        "Execution listeners are not supported for the '{local}' element. \
                         Currently, only [{}] elements can have execution listeners.",
                        ELEMENTS_WITH_EXECUTION_LISTENERS.join(", ")
                    ),
                );
            }
        }
    }

    /// `zeebe:executionListeners` of the element at `index` (its data must be set), with the
    /// restrictions Zeebe puts on each element type.
    pub(super) fn execution_listeners(
        &mut self,
        node: NodeId,
        element_id: &str,
        index: ElementIndex,
    ) -> Vec<ExecutionListener> {
        let all = self.extensions(node, "executionListeners");
        let Some(&listeners) = all.first() else {
            return Vec::new();
        };
        let local = self.node(node).local.as_str();
        if !ELEMENTS_WITH_EXECUTION_LISTENERS.contains(&local) {
            self.reject_listeners_on(node, local);
            return Vec::new();
        }
        if all.len() > 1 && index != ElementIndex::PROCESS {
            self.error(
                node,
                "Must have exactly one 'zeebe:executionListeners' extension element when exists. \
                 Please check process definition XML and retain only one extension element.",
            );
        }
        let mut result: Vec<ExecutionListener> = Vec::new();
        let children: Vec<NodeId> = self
            .doc
            .children_named(listeners, Ns::Zeebe, "executionListener")
            .collect();
        // eventType|type combinations seen, with how often, in first-seen order.
        let mut seen: Vec<(String, String, usize)> = Vec::new();
        for listener in children {
            let raw_event = self.node(listener).attr("eventType").unwrap_or_default();
            let event_type = match raw_event {
                "start" => Some(ExecutionListenerEventType::Start),
                "end" => Some(ExecutionListenerEventType::End),
                "" => {
                    self.error(
                        listener,
                        "Attribute 'eventType' must be present and not empty",
                    );
                    None
                }
                other => {
                    self.error(
                        listener,
                        format!(
                            "Attribute 'eventType' must be one of: start, end, but was '{other}'"
                        ),
                    );
                    None
                }
            };
            let (job_type, retries) = self.task_definition(listener, element_id);
            let task_headers = match self
                .doc
                .children_named(listener, Ns::Zeebe, "taskHeaders")
                .next()
            {
                Some(h) => self.headers(h),
                None => Vec::new(),
            };
            let type_raw = self
                .node(listener)
                .attr("type")
                .unwrap_or_default()
                .to_owned();
            match seen
                .iter_mut()
                .find(|(e, t, _)| e == raw_event && *t == type_raw)
            {
                Some((_, _, count)) => *count += 1,
                None => seen.push((raw_event.to_owned(), type_raw, 1)),
            }
            if let Some(event_type) = event_type {
                result.push(ExecutionListener {
                    event_type,
                    job_type,
                    retries,
                    task_headers,
                });
            }
        }
        for (event, job_type, count) in seen.iter().filter(|(_, _, c)| *c > 1) {
            self.error(
                listeners,
                format!(
                    "Found '{count}' duplicates based on eventType[{event}] and type[{job_type}], \
                     these combinations should be unique."
                ),
            );
        }
        self.listener_restrictions(node, index, all.len(), &result);
        result
    }

    /// What Zeebe's start event, end event, boundary event and gateway validators say about
    /// their listeners.
    fn listener_restrictions(
        &mut self,
        node: NodeId,
        index: ElementIndex,
        definitions: usize,
        listeners: &[ExecutionListener],
    ) {
        let has = |t: ExecutionListenerEventType| listeners.iter().any(|l| l.event_type == t);
        let Some(element) = self.elements.get(index.index()) else {
            return;
        };
        let checked_by_zeebe = matches!(
            element.data,
            ElementData::StartEvent(_)
                | ElementData::EndEvent(_)
                | ElementData::BoundaryEvent(_)
                | ElementData::ExclusiveGateway(_)
                | ElementData::InclusiveGateway(_)
                | ElementData::ParallelGateway
                | ElementData::EventBasedGateway
        );
        if !checked_by_zeebe {
            return;
        }
        if definitions > 1 {
            self.error(
                node,
                "Element must not have more than one execution listeners definition",
            );
            return;
        }
        let message = match &element.data {
            ElementData::StartEvent(_) if has(ExecutionListenerEventType::Start) => {
                "Execution listeners of type 'start' are not supported by start events"
            }
            ElementData::EndEvent(ThrowEvent {
                event: EventDefinition::Error(_) | EventDefinition::Escalation(_),
            }) if has(ExecutionListenerEventType::End) => {
                "Execution listeners of type 'end' are not supported by [escalation, error] end events"
            }
            ElementData::BoundaryEvent(BoundaryEvent {
                event: EventDefinition::Compensation(_),
                ..
            }) => {
                "Execution listeners of type 'start' and 'end' are not supported by [compensation] boundary events"
            }
            ElementData::BoundaryEvent(_) if has(ExecutionListenerEventType::Start) => {
                "Execution listeners of type 'start' are not supported by boundary events"
            }
            ElementData::ExclusiveGateway(_)
            | ElementData::InclusiveGateway(_)
            | ElementData::ParallelGateway
            | ElementData::EventBasedGateway
                if has(ExecutionListenerEventType::End) =>
            {
                "Execution listeners of type 'end' are not supported by gateway element"
            }
            _ => return,
        };
        self.error(node, message);
    }

    /// `zeebe:formDefinition` of a user task (`camunda_user_task`: it has `zeebe:userTask`)
    /// or start event.
    pub(super) fn form_definition(
        &mut self,
        node: NodeId,
        element_id: &str,
        camunda_user_task: bool,
        unique: bool,
    ) -> Option<FormDefinition> {
        let ext = self.extension(node, "formDefinition", unique)?;
        let n = self.node(ext);
        let blank = |v: Option<&str>| v.is_none_or(|v| v.trim().is_empty());
        let form_key = n.attr("formKey");
        let form_id = n.attr("formId");
        let external = n.attr("externalReference");
        let has_binding = n.attr("bindingType").is_some();
        if camunda_user_task {
            if blank(external) == blank(form_id) {
                self.error(
                    ext,
                    "Exactly one of the attributes 'formId, externalReference' must be present \
                     and not blank for native user tasks",
                );
            }
            if !blank(external) && has_binding {
                self.error(
                    ext,
                    "Attribute 'externalReference' must not be used in combination with attribute 'bindingType'",
                );
            }
        } else {
            if blank(form_key) == blank(form_id) {
                self.error(
                    ext,
                    "Exactly one of the attributes 'formId, formKey' must be present and not blank",
                );
            }
            if !blank(form_key) && has_binding {
                self.error(
                    ext,
                    "Attribute 'formKey' must not be used in combination with attribute 'bindingType'",
                );
            }
        }
        let (binding_type, version_tag) = self.binding(ext);
        let external_reference = if blank(external) {
            None
        } else {
            self.value(ext, "externalReference", element_id)
        };
        Some(FormDefinition {
            form_key: form_key.filter(|v| !v.trim().is_empty()).map(str::to_owned),
            form_id: form_id.filter(|v| !v.trim().is_empty()).map(str::to_owned),
            external_reference,
            binding_type,
            version_tag,
        })
    }

    /// `zeebe:agentDefinition`, allowed with one agent type on service tasks and another on
    /// ad-hoc sub-processes.
    pub(super) fn agent_definition(&mut self, node: NodeId, ad_hoc: bool) -> Option<AgentType> {
        let ext = self.extension(node, "agentDefinition", false)?;
        let raw = self.required(ext, "agentType")?;
        let Some(agent_type) = AgentType::parse(raw) else {
            self.error(
                ext,
                "Attribute 'agentType' must be one of: aiAgentSubProcess, aiAgentTask, external",
            );
            return None;
        };
        match agent_type {
            AgentType::AiAgentSubProcess if !ad_hoc => self.error(
                node,
                "agentType 'aiAgentSubProcess' is only allowed on an ad-hoc sub-process.",
            ),
            AgentType::AiAgentTask | AgentType::External if ad_hoc => self.error(
                node,
                format!("agentType '{raw}' is only allowed on a service task."),
            ),
            _ => {}
        }
        Some(agent_type)
    }

    // ---- process-level extensions --------------------------------------------------------

    pub(super) fn version_tag(&mut self, process: NodeId) -> Option<String> {
        let ext = self.extension(process, "versionTag", true)?;
        self.node(ext).attr("value").map(str::to_owned)
    }

    pub(super) fn process_job_priority(
        &mut self,
        process: NodeId,
        process_id: &str,
    ) -> Option<ExprOrStatic<i32>> {
        let ext = self.extension(process, "jobPriorityDefinition", false)?;
        self.job_priority(ext, process_id)
    }

    pub(super) fn user_task_forms(&mut self, process: NodeId) -> Vec<UserTaskForm> {
        let mut forms = Vec::new();
        for form in self.extensions(process, "userTaskForm") {
            let n = self.node(form);
            if n.text.is_empty() {
                self.error(
                    form,
                    "User task form text content has to be present and not empty",
                );
            }
            forms.push(UserTaskForm {
                id: n.attr("id").unwrap_or_default().to_owned(),
                body: n.text.clone(),
            });
        }
        forms
    }
}
