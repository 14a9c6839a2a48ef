//! A small BPMN builder for scenario tests, in the spirit of Zeebe's
//! `Bpmn.createExecutableProcess()`: elements are chained from the last one added, with
//! `move_to` and `connect_to` for branches and joins.
//!
//! ```
//! use beeline_stream::testkit::bpmn::ProcessBuilder;
//! let xml = ProcessBuilder::new("order")
//!     .start_event("start")
//!     .service_task("pay", "payment")
//!     .exclusive_gateway("split")
//!     .condition("=amount > 100")
//!     .end_event("big")
//!     .move_to("split")
//!     .default_flow()
//!     .end_event("small")
//!     .build();
//! assert!(xml.contains(r#"<bpmn:serviceTask id="pay""#));
//! ```

use std::fmt::Write;

#[derive(Debug, Clone)]
struct Flow {
    id: String,
    source: String,
    target: String,
    condition: Option<String>,
}

/// Builds one executable process as a BPMN document.
#[derive(Debug, Clone)]
pub struct ProcessBuilder {
    id: String,
    elements: Vec<(String, String)>,
    flows: Vec<Flow>,
    defaults: Vec<(String, String)>,
    cursor: Option<String>,
    next_condition: Option<String>,
    next_default: bool,
    /// Sub-processes being built, innermost last: (id, elements before it started).
    open_scopes: Vec<(String, usize)>,
    /// Element index -> the scope it belongs to (for nesting).
    scope_of: Vec<Option<String>>,
    sub_processes: std::collections::HashSet<String>,
    /// Event sub-processes among `sub_processes`.
    event_sub_processes: std::collections::HashSet<String>,
    /// Root elements (`bpmn:error`, `bpmn:message`, ...).
    roots: Vec<String>,
    /// `zeebe:versionTag` of the process.
    version_tag: Option<String>,
    /// More extension elements of the process (`<zeebe:executionListeners>`).
    process_extensions: String,
}

impl ProcessBuilder {
    pub fn new(id: &str) -> Self {
        Self {
            id: id.to_string(),
            elements: Vec::new(),
            flows: Vec::new(),
            defaults: Vec::new(),
            cursor: None,
            next_condition: None,
            next_default: false,
            open_scopes: Vec::new(),
            scope_of: Vec::new(),
            sub_processes: std::collections::HashSet::new(),
            event_sub_processes: std::collections::HashSet::new(),
            roots: Vec::new(),
            version_tag: None,
            process_extensions: String::new(),
        }
    }

    /// Tags the process's version (`zeebe:versionTag`).
    pub fn version_tag(mut self, tag: &str) -> Self {
        self.version_tag = Some(tag.to_string());
        self
    }

    fn add(mut self, id: &str, xml: String) -> Self {
        if let Some(source) = self.cursor.take() {
            self = self.flow(&source, id);
        }
        self.elements.push((id.to_string(), xml));
        self.scope_of
            .push(self.open_scopes.last().map(|(s, _)| s.clone()));
        self.cursor = Some(id.to_string());
        self
    }

    fn flow(mut self, source: &str, target: &str) -> Self {
        let id = format!("flow_{source}_{target}_{}", self.flows.len());
        if self.next_default {
            self.defaults.push((source.to_string(), id.clone()));
            self.next_default = false;
        }
        self.flows.push(Flow {
            id,
            source: source.to_string(),
            target: target.to_string(),
            condition: self.next_condition.take(),
        });
        self
    }

    /// The next flow gets this condition (a FEEL expression with its `=`).
    pub fn condition(mut self, expression: &str) -> Self {
        self.next_condition = Some(expression.to_string());
        self
    }

    /// The next flow is the default flow of the gateway it leaves.
    pub fn default_flow(mut self) -> Self {
        self.next_default = true;
        self
    }

    /// Continues from an element added earlier (another branch of a gateway).
    pub fn move_to(mut self, id: &str) -> Self {
        self.cursor = Some(id.to_string());
        self
    }

    /// Connects the current element to an existing one (a join, a loop) and continues there.
    pub fn connect_to(mut self, id: &str) -> Self {
        if let Some(source) = self.cursor.take() {
            self = self.flow(&source, id);
        }
        self.cursor = Some(id.to_string());
        self
    }

    pub fn start_event(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:startEvent id="{id}"/>"#))
    }

    pub fn end_event(mut self, id: &str) -> Self {
        self = self.add(id, format!(r#"<bpmn:endEvent id="{id}"/>"#));
        self.cursor = None;
        self
    }

    pub fn terminate_end_event(mut self, id: &str) -> Self {
        self = self.add(
            id,
            format!(r#"<bpmn:endEvent id="{id}"><bpmn:terminateEventDefinition/></bpmn:endEvent>"#),
        );
        self.cursor = None;
        self
    }

    pub fn intermediate_throw_event(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:intermediateThrowEvent id="{id}"/>"#))
    }

    pub fn task(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:task id="{id}"/>"#))
    }

    pub fn manual_task(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:manualTask id="{id}"/>"#))
    }

    pub fn service_task(self, id: &str, job_type: &str) -> Self {
        self.service_task_with(id, job_type, "")
    }

    /// A service task with extra extension elements (`<zeebe:ioMapping>`, headers, ...) and
    /// `retries` given as part of them when wanted.
    pub fn service_task_with(self, id: &str, job_type: &str, extensions: &str) -> Self {
        self.add(
            id,
            format!(
                r#"<bpmn:serviceTask id="{id}"><bpmn:extensionElements><zeebe:taskDefinition type="{}" retries="3"/>{extensions}</bpmn:extensionElements></bpmn:serviceTask>"#,
                escape(job_type)
            ),
        )
    }

    /// A service task whose retries are given.
    pub fn service_task_retries(self, id: &str, job_type: &str, retries: &str) -> Self {
        self.add(
            id,
            format!(
                r#"<bpmn:serviceTask id="{id}"><bpmn:extensionElements><zeebe:taskDefinition type="{}" retries="{}"/></bpmn:extensionElements></bpmn:serviceTask>"#,
                escape(job_type),
                escape(retries)
            ),
        )
    }

    pub fn script_task(self, id: &str, expression: &str, result_variable: &str) -> Self {
        self.add(
            id,
            format!(
                r#"<bpmn:scriptTask id="{id}"><bpmn:extensionElements><zeebe:script expression="{}" resultVariable="{result_variable}"/></bpmn:extensionElements></bpmn:scriptTask>"#,
                escape(expression)
            ),
        )
    }

    /// A business rule task evaluating a deployed decision into `result_variable`.
    pub fn business_rule_task(self, id: &str, decision_id: &str, result_variable: &str) -> Self {
        self.add(
            id,
            format!(
                r#"<bpmn:businessRuleTask id="{id}"><bpmn:extensionElements><zeebe:calledDecision decisionId="{}" resultVariable="{result_variable}"/></bpmn:extensionElements></bpmn:businessRuleTask>"#,
                escape(decision_id)
            ),
        )
    }

    /// A call activity; `called_element` holds the attributes of its `zeebe:calledElement`
    /// (`processId="child"`, `propagateAllChildVariables="false"`, ...), `extensions` more
    /// extension elements (`<zeebe:ioMapping>`).
    pub fn call_activity(self, id: &str, called_element: &str, extensions: &str) -> Self {
        self.add(
            id,
            format!(
                r#"<bpmn:callActivity id="{id}"><bpmn:extensionElements><zeebe:calledElement {called_element}/>{extensions}</bpmn:extensionElements></bpmn:callActivity>"#
            ),
        )
    }

    /// A user task: a Camunda user task with `zeebe:userTask` when `camunda` (else a job for a
    /// task list), with more extension elements (`<zeebe:assignmentDefinition .../>`, ...).
    pub fn user_task(self, id: &str, camunda: bool, extensions: &str) -> Self {
        let marker = if camunda { "<zeebe:userTask/>" } else { "" };
        self.add(
            id,
            format!(
                r#"<bpmn:userTask id="{id}"><bpmn:extensionElements>{marker}{extensions}</bpmn:extensionElements></bpmn:userTask>"#
            ),
        )
    }

    pub fn exclusive_gateway(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:exclusiveGateway id="{id}"/>"#))
    }

    pub fn parallel_gateway(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:parallelGateway id="{id}"/>"#))
    }

    pub fn inclusive_gateway(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:inclusiveGateway id="{id}"/>"#))
    }

    /// Adds an element given as XML, connected from the current one.
    pub fn element(self, id: &str, xml: &str) -> Self {
        self.add(id, xml.to_string())
    }

    /// Adds an element given as XML that nothing flows into (a boundary event, a link catch
    /// event); the chain continues from it.
    pub fn detached(mut self, id: &str, xml: &str) -> Self {
        self.cursor = None;
        self.add(id, xml.to_string())
    }

    /// A boundary event on `attached_to` with an event definition given as XML; the chain
    /// continues from it.
    pub fn boundary_event(
        self,
        id: &str,
        attached_to: &str,
        definition: &str,
        interrupting: bool,
    ) -> Self {
        self.detached(
            id,
            &format!(
                r#"<bpmn:boundaryEvent id="{id}" attachedToRef="{attached_to}" cancelActivity="{interrupting}">{definition}</bpmn:boundaryEvent>"#
            ),
        )
    }

    /// A start event with an event definition (see [`timer`], [`message_ref`], [`signal_ref`]).
    pub fn start_event_with(self, id: &str, definition: &str) -> Self {
        self.add(
            id,
            format!(r#"<bpmn:startEvent id="{id}">{definition}</bpmn:startEvent>"#),
        )
    }

    /// An intermediate catch event with an event definition.
    pub fn catch_event(self, id: &str, definition: &str) -> Self {
        self.add(
            id,
            format!(r#"<bpmn:intermediateCatchEvent id="{id}">{definition}</bpmn:intermediateCatchEvent>"#),
        )
    }

    /// An intermediate throw event with an event definition.
    pub fn throw_event(self, id: &str, definition: &str) -> Self {
        self.add(
            id,
            format!(r#"<bpmn:intermediateThrowEvent id="{id}">{definition}</bpmn:intermediateThrowEvent>"#),
        )
    }

    /// An end event with an event definition.
    pub fn end_event_with(mut self, id: &str, definition: &str) -> Self {
        self = self.add(
            id,
            format!(r#"<bpmn:endEvent id="{id}">{definition}</bpmn:endEvent>"#),
        );
        self.cursor = None;
        self
    }

    /// A receive task waiting for the message declared with [`message`](Self::message).
    pub fn receive_task(self, id: &str, message_name: &str) -> Self {
        self.add(
            id,
            format!(
                r#"<bpmn:receiveTask id="{id}" messageRef="{}"/>"#,
                message_id(message_name)
            ),
        )
    }

    pub fn event_based_gateway(self, id: &str) -> Self {
        self.add(id, format!(r#"<bpmn:eventBasedGateway id="{id}"/>"#))
    }

    /// Declares a message; `correlation_key` is its FEEL expression (with `=`), or `None` for
    /// a message only start events catch.
    pub fn message(self, name: &str, correlation_key: Option<&str>) -> Self {
        let subscription = correlation_key
            .map(|key| {
                format!(
                    r#"<bpmn:extensionElements><zeebe:subscription correlationKey="{}"/></bpmn:extensionElements>"#,
                    escape(key)
                )
            })
            .unwrap_or_default();
        let xml = format!(
            r#"<bpmn:message id="{}" name="{}">{subscription}</bpmn:message>"#,
            message_id(name),
            escape(name)
        );
        self.root(&xml)
    }

    /// Declares a signal.
    pub fn signal(self, name: &str) -> Self {
        let xml = format!(
            r#"<bpmn:signal id="{}" name="{}"/>"#,
            signal_id(name),
            escape(name)
        );
        self.root(&xml)
    }

    /// A root element of the definitions (`<bpmn:error .../>`, `<bpmn:message .../>`).
    pub fn root(mut self, xml: &str) -> Self {
        self.roots.push(xml.to_string());
        self
    }

    /// Opens an event sub-process in the current scope; its start event comes next (use
    /// `detached`), and `end_sub_process` closes it.
    pub fn event_sub_process(mut self, id: &str) -> Self {
        self.cursor = None;
        self = self.add(id, String::new());
        self.sub_processes.insert(id.to_string());
        self.event_sub_processes.insert(id.to_string());
        self.open_scopes.push((id.to_string(), self.elements.len()));
        self.cursor = None;
        self
    }

    /// Opens an embedded sub-process; elements added until `end_sub_process` are inside it.
    pub fn sub_process(mut self, id: &str) -> Self {
        self = self.add(id, String::new());
        self.sub_processes.insert(id.to_string());
        self.open_scopes.push((id.to_string(), self.elements.len()));
        self.cursor = None;
        self
    }

    /// Closes the innermost sub-process and continues after it (nothing continues after an
    /// event sub-process).
    pub fn end_sub_process(mut self) -> Self {
        if let Some((id, _)) = self.open_scopes.pop() {
            self.cursor = (!self.event_sub_processes.contains(&id)).then_some(id);
        }
        self
    }

    /// Makes the activity `id` a multi-instance activity: `loop_attributes` are the attributes
    /// of its `zeebe:loopCharacteristics` (`inputCollection="= items" inputElement="item"`),
    /// `completion_condition` its completion condition (with its `=`).
    pub fn multi_instance(
        mut self,
        id: &str,
        sequential: bool,
        loop_attributes: &str,
        completion_condition: Option<&str>,
    ) -> Self {
        let condition = completion_condition
            .map(|c| {
                format!(
                    "<bpmn:completionCondition>{}</bpmn:completionCondition>",
                    escape(c)
                )
            })
            .unwrap_or_default();
        let characteristics = format!(
            r#"<bpmn:multiInstanceLoopCharacteristics isSequential="{sequential}"><bpmn:extensionElements><zeebe:loopCharacteristics {loop_attributes}/></bpmn:extensionElements>{condition}</bpmn:multiInstanceLoopCharacteristics>"#
        );
        let is_scope = self.sub_processes.contains(id);
        if let Some(position) = self.elements.iter().position(|(e, _)| e == id) {
            let xml = &mut self.elements[position].1;
            if is_scope {
                // A sub-process's own content comes right after its opening tag.
                xml.push_str(&characteristics);
            } else if let Some(open) = xml.strip_suffix("/>") {
                let tag = open[1..].split(' ').next().unwrap_or_default().to_string();
                *xml = format!("{open}>{characteristics}</{tag}>");
            } else if let Some(end) = xml.rfind("</") {
                xml.insert_str(end, &characteristics);
            }
        }
        self
    }

    /// Adds `<zeebe:ioMapping>` content to an element built without it (sub-processes).
    pub fn io_mapping(mut self, id: &str, mapping: &str) -> Self {
        if let Some(position) = self.elements.iter().position(|(e, _)| e == id) {
            let content = &mut self.elements[position].1;
            content.insert_str(
                0,
                &format!(
                    r#"<bpmn:extensionElements><zeebe:ioMapping>{mapping}</zeebe:ioMapping></bpmn:extensionElements>"#
                ),
            );
        }
        self
    }

    /// Adds extension elements (`<zeebe:executionListeners>...`) to the element `id`, or to
    /// the process when `id` is the process's.
    pub fn extension(mut self, id: &str, xml: &str) -> Self {
        if id == self.id {
            self.process_extensions.push_str(xml);
            return self;
        }
        let is_scope = self.sub_processes.contains(id);
        if let Some(position) = self.elements.iter().position(|(e, _)| e == id) {
            let content = &mut self.elements[position].1;
            const OPEN: &str = "<bpmn:extensionElements>";
            if let Some(at) = content.find(OPEN) {
                content.insert_str(at + OPEN.len(), xml);
            } else if is_scope {
                content.insert_str(0, &format!("{OPEN}{xml}</bpmn:extensionElements>"));
            } else if let Some(open) = content.strip_suffix("/>") {
                let tag = open[1..].split(' ').next().unwrap_or_default().to_string();
                *content = format!("{open}>{OPEN}{xml}</bpmn:extensionElements></{tag}>");
            } else if let Some(end) = content.find('>') {
                content.insert_str(end + 1, &format!("{OPEN}{xml}</bpmn:extensionElements>"));
            }
        }
        self
    }

    /// The BPMN document.
    pub fn build(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<?xml version="1.0" encoding="UTF-8"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="definitions" targetNamespace="http://beeline.test"><bpmn:process id="{}" isExecutable="true">"#,
            self.id
        );
        if self.version_tag.is_some() || !self.process_extensions.is_empty() {
            out.push_str("<bpmn:extensionElements>");
            if let Some(tag) = &self.version_tag {
                let _ = write!(out, r#"<zeebe:versionTag value="{}"/>"#, escape(tag));
            }
            out.push_str(&self.process_extensions);
            out.push_str("</bpmn:extensionElements>");
        }
        self.write_scope(&mut out, None);
        out.push_str("</bpmn:process>");
        for root in &self.roots {
            out.push_str(root);
        }
        out.push_str("</bpmn:definitions>");
        out
    }

    fn write_scope(&self, out: &mut String, scope: Option<&str>) {
        for (index, (id, xml)) in self.elements.iter().enumerate() {
            if self.scope_of[index].as_deref() != scope {
                continue;
            }
            if self.sub_processes.contains(id) {
                let triggered = if self.event_sub_processes.contains(id) {
                    r#" triggeredByEvent="true""#
                } else {
                    ""
                };
                let _ = write!(out, r#"<bpmn:subProcess id="{id}"{triggered}>{xml}"#);
                self.write_scope(out, Some(id));
                out.push_str("</bpmn:subProcess>");
            } else if let Some((_, flow)) = self.defaults.iter().find(|(gateway, _)| gateway == id)
            {
                // Gateways with a default flow name it in an attribute.
                out.push_str(&xml.replacen(
                    &format!(r#"id="{id}""#),
                    &format!(r#"id="{id}" default="{flow}""#),
                    1,
                ));
            } else {
                out.push_str(xml);
            }
        }
        for flow in &self.flows {
            let source_scope = self
                .elements
                .iter()
                .position(|(e, _)| *e == flow.source)
                .and_then(|i| self.scope_of[i].clone());
            if source_scope.as_deref() != scope {
                continue;
            }
            match &flow.condition {
                Some(condition) => {
                    let _ = write!(
                        out,
                        r#"<bpmn:sequenceFlow id="{}" sourceRef="{}" targetRef="{}"><bpmn:conditionExpression>{}</bpmn:conditionExpression></bpmn:sequenceFlow>"#,
                        flow.id,
                        flow.source,
                        flow.target,
                        escape(condition)
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        r#"<bpmn:sequenceFlow id="{}" sourceRef="{}" targetRef="{}"/>"#,
                        flow.id, flow.source, flow.target
                    );
                }
            }
        }
    }
}

fn message_id(name: &str) -> String {
    format!(
        "message-{}",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    )
}

fn signal_id(name: &str) -> String {
    format!(
        "signal-{}",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    )
}

/// A timer event definition: `kind` is `timeDuration`, `timeDate` or `timeCycle`.
pub fn timer(kind: &str, text: &str) -> String {
    format!(
        r#"<bpmn:timerEventDefinition><bpmn:{kind}>{}</bpmn:{kind}></bpmn:timerEventDefinition>"#,
        escape(text)
    )
}

/// A message event definition for a message declared with [`ProcessBuilder::message`].
pub fn message_ref(name: &str) -> String {
    format!(
        r#"<bpmn:messageEventDefinition messageRef="{}"/>"#,
        message_id(name)
    )
}

/// A signal event definition for a signal declared with [`ProcessBuilder::signal`].
pub fn signal_ref(name: &str) -> String {
    format!(
        r#"<bpmn:signalEventDefinition signalRef="{}"/>"#,
        signal_id(name)
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
