//! Tasks, call activities and ad-hoc sub-processes: their Zeebe extension elements.

use super::builder::ProcessBuilder;
use super::roots::MessageUse;
use crate::model::*;
use crate::xml::{NodeId, Ns};

impl ProcessBuilder<'_, '_> {
    pub(super) fn service_task(&mut self, node: NodeId, id: &str) -> ServiceTask {
        let definitions = self.extensions(node, "taskDefinition");
        if definitions.len() != 1 {
            self.error(
                node,
                "Must have exactly one 'zeebe:taskDefinition' extension element",
            );
        }
        let job_worker = self.job_worker(node, definitions.first().copied(), id);
        let agent_type = self.agent_definition(node, false);
        ServiceTask {
            job_worker,
            agent_type,
        }
    }

    pub(super) fn send_task(&mut self, node: NodeId, id: &str) -> SendTask {
        let publish = self.extensions(node, "publishMessage");
        let definitions = self.extensions(node, "taskDefinition");
        let one_of = (publish.len() == 1 && definitions.is_empty())
            || (publish.is_empty() && definitions.len() == 1);
        if !one_of {
            self.error(
                node,
                "Must have either one 'zeebe:publishMessage' or one 'zeebe:taskDefinition' extension element",
            );
        }
        if definitions.is_empty() && !self.extensions(node, "jobPriorityDefinition").is_empty() {
            self.error(
                node,
                "'zeebe:jobPriorityDefinition' is only allowed in job-worker mode ('zeebe:taskDefinition')",
            );
        }
        if let (Some(&p), true) = (publish.first(), definitions.is_empty()) {
            let reference = self.node(node).attr("messageRef");
            let message = self.message_ref(reference, MessageUse::Throw);
            if message.is_none() {
                self.error(node, "Must reference a message");
            }
            let publish = self.publish_message(p, id);
            // Headers only matter to a job worker, but one set at most either way.
            self.extension(node, "taskHeaders", true);
            return SendTask::PublishMessage {
                message: message.unwrap_or_else(placeholder_message),
                publish,
            };
        }
        // The job worker gets the task headers; a second set is an error.
        SendTask::JobWorker(self.job_worker(node, definitions.first().copied(), id))
    }

    /// `zeebe:publishMessage`.
    pub(super) fn publish_message(&mut self, ext: NodeId, id: &str) -> PublishMessage {
        let correlation_key = match self.required(ext, "correlationKey") {
            Some(_) => self.value(ext, "correlationKey", id),
            None => None,
        };
        PublishMessage {
            correlation_key: correlation_key.unwrap_or_else(|| ExprOrStatic::Static(String::new())),
            message_id: self.value(ext, "messageId", id),
            time_to_live: self.value(ext, "timeToLive", id),
        }
    }

    pub(super) fn receive_task(&mut self, node: NodeId) -> ReceiveTask {
        let reference = self.node(node).attr("messageRef");
        let message = self.message_ref(reference, MessageUse::Correlate);
        if message.is_none() {
            self.error(node, "Must reference a message");
        }
        ReceiveTask {
            message: message.unwrap_or_else(placeholder_message),
        }
    }

    pub(super) fn user_task(&mut self, node: NodeId, id: &str) -> UserTask {
        let camunda_user_task = self.extension(node, "userTask", true).is_some();
        let form = self.form_definition(node, id, camunda_user_task, true);
        let assignment = match self.extension(node, "assignmentDefinition", true) {
            Some(ext) => AssignmentDefinition {
                assignee: self.value(ext, "assignee", id),
                candidate_groups: self.csv_value(ext, "candidateGroups", id),
                candidate_users: self.csv_value(ext, "candidateUsers", id),
            },
            None => AssignmentDefinition::default(),
        };
        let schedule = match self.extension(node, "taskSchedule", true) {
            Some(ext) => TaskSchedule {
                due_date: self.value(ext, "dueDate", id),
                follow_up_date: self.value(ext, "followUpDate", id),
            },
            None => TaskSchedule::default(),
        };
        let priority = self
            .extension(node, "priorityDefinition", true)
            .and_then(|ext| self.user_task_priority(ext, id));
        let task_headers = self.task_headers(node);
        let task_listeners = self.task_listeners(node, id, camunda_user_task);
        UserTask {
            implementation: if camunda_user_task {
                UserTaskImplementation::CamundaUserTask
            } else {
                UserTaskImplementation::JobWorker
            },
            form,
            assignment,
            schedule,
            priority,
            task_headers,
            task_listeners,
        }
    }

    /// A candidate list: an expression, or static comma-separated values.
    fn csv_value(
        &mut self,
        ext: NodeId,
        attr: &'static str,
        id: &str,
    ) -> Option<ExprOrStatic<Vec<String>>> {
        match self.value(ext, attr, id)? {
            ExprOrStatic::Expression(e) => Some(ExprOrStatic::Expression(e)),
            ExprOrStatic::Static(s) => {
                let values: Vec<String> = s.split(',').map(|v| v.trim().to_owned()).collect();
                if values.iter().any(String::is_empty) {
                    self.error(
                        ext,
                        format!(
                            "Expected static value to be a list of comma-separated values, \
                             e.g. 'a,b,c', but found '{s}'."
                        ),
                    );
                }
                Some(ExprOrStatic::Static(values))
            }
        }
    }

    /// `zeebe:priorityDefinition priority`: 0..=100 or an expression. Without the attribute
    /// the task takes the default priority (50), as Zeebe's model reads it: Camunda's model
    /// builder writes `<zeebe:priorityDefinition/>` on every Camunda user task.
    fn user_task_priority(&mut self, ext: NodeId, id: &str) -> Option<ExprOrStatic<i32>> {
        self.node(ext).attr("priority")?;
        self.required(ext, "priority")?;
        match self.value(ext, "priority", id)? {
            ExprOrStatic::Expression(e) => Some(ExprOrStatic::Expression(e)),
            ExprOrStatic::Static(s) => match s.trim().parse::<i32>() {
                Ok(p) if (0..=100).contains(&p) => Some(ExprOrStatic::Static(p)),
                Ok(_) => {
                    self.error(
                        ext,
                        format!("Priority must be a number between 0 and 100, but was '{s}'"),
                    );
                    None
                }
                Err(_) => {
                    self.error(
                        ext,
                        format!(
                            "Expected static value to be a valid Number between 0 and 100, but found '{s}'."
                        ),
                    );
                    None
                }
            },
        }
    }

    fn task_listeners(
        &mut self,
        node: NodeId,
        id: &str,
        camunda_user_task: bool,
    ) -> Vec<TaskListener> {
        let Some(listeners) = self.extension(node, "taskListeners", true) else {
            return Vec::new();
        };
        let children: Vec<NodeId> = self
            .doc
            .children_named(listeners, Ns::Zeebe, "taskListener")
            .collect();
        if !children.is_empty() && !camunda_user_task {
            self.error(
                listeners,
                "Task listeners are only allowed on Camunda user tasks.",
            );
        }
        let mut result = Vec::new();
        for listener in children {
            let raw = self.node(listener).attr("eventType").unwrap_or_default();
            let event_type = if raw.is_empty() {
                self.error(
                    listener,
                    "Attribute 'eventType' must be present and not empty",
                );
                None
            } else {
                let parsed = TaskListenerEventType::parse(raw);
                if parsed.is_none() {
                    self.error(
                        listener,
                        format!(
                            "Task listener event type '{raw}' is not supported. Currently, only \
                             'creating', 'assigning', 'updating', 'completing' event types and \
                             'create', 'assignment', 'update', 'complete' deprecated event types \
                             are supported."
                        ),
                    );
                }
                parsed
            };
            let (job_type, retries) = self.task_definition(listener, id);
            if let Some(event_type) = event_type {
                result.push(TaskListener {
                    event_type,
                    job_type,
                    retries,
                });
            }
        }
        result
    }

    pub(super) fn script_task(&mut self, node: NodeId, id: &str) -> ScriptTask {
        let scripts = self.extensions(node, "script");
        let definitions = self.extensions(node, "taskDefinition");
        self.either_or(node, &scripts, &definitions, "script");
        self.extension(node, "script", true);
        self.extension(node, "taskDefinition", true);
        if let (Some(&script), true) = (scripts.first(), definitions.is_empty()) {
            let expression = match self.required(script, "expression") {
                Some(_) => self
                    .value(script, "expression", id)
                    .and_then(|v| self.expression_only(script, v)),
                None => None,
            };
            let result_variable = self.required(script, "resultVariable").unwrap_or_default();
            // Headers are only used in job worker mode, but one set at most either way.
            self.extension(node, "taskHeaders", true);
            if let Some(expression) = expression {
                return ScriptTask::Script(Script {
                    expression,
                    result_variable: result_variable.to_owned(),
                });
            }
        }
        ScriptTask::JobWorker(self.job_worker(node, definitions.first().copied(), id))
    }

    pub(super) fn business_rule_task(&mut self, node: NodeId, id: &str) -> BusinessRuleTask {
        let decisions = self.extensions(node, "calledDecision");
        let definitions = self.extensions(node, "taskDefinition");
        self.either_or(node, &decisions, &definitions, "calledDecision");
        self.extension(node, "calledDecision", true);
        self.extension(node, "taskDefinition", true);
        if let (Some(&decision), true) = (decisions.first(), definitions.is_empty()) {
            let decision_id = match self.required(decision, "decisionId") {
                Some(_) => self.value(decision, "decisionId", id),
                None => None,
            };
            let result_variable = self
                .required(decision, "resultVariable")
                .unwrap_or_default();
            let (binding_type, version_tag) = self.binding(decision);
            // Task headers are only read in job worker mode, but one set at most either way.
            self.task_headers(node);
            return BusinessRuleTask::CalledDecision(CalledDecision {
                decision_id: decision_id.unwrap_or_else(|| ExprOrStatic::Static(String::new())),
                result_variable: result_variable.to_owned(),
                binding_type,
                version_tag,
            });
        }
        BusinessRuleTask::JobWorker(self.job_worker(node, definitions.first().copied(), id))
    }

    /// Zeebe's "either one `zeebe:<alternative>` or one `zeebe:taskDefinition`" rule.
    fn either_or(
        &mut self,
        node: NodeId,
        alternative: &[NodeId],
        definitions: &[NodeId],
        name: &str,
    ) {
        let ok = (alternative.len() == 1 && definitions.is_empty())
            || (alternative.is_empty() && definitions.len() == 1);
        if !ok {
            self.error(
                node,
                format!(
                    "Must have either one 'zeebe:{name}' or one 'zeebe:taskDefinition' extension element"
                ),
            );
        }
    }

    pub(super) fn call_activity(&mut self, node: NodeId, id: &str) -> CallActivity {
        let called = self.extensions(node, "calledElement");
        if called.len() != 1 {
            self.error(
                node,
                "Must have exactly one 'zeebe:calledElement' extension element",
            );
        }
        let Some(&ext) = called.first() else {
            return CallActivity {
                process_id: ExprOrStatic::Static(String::new()),
                propagate_all_child_variables: true,
                propagate_all_parent_variables: true,
                binding_type: BindingType::Latest,
                version_tag: None,
                business_id: None,
            };
        };
        let process_id = match self.required(ext, "processId") {
            Some(_) => self.value(ext, "processId", id),
            None => None,
        };
        let (binding_type, version_tag) = self.binding(ext);
        CallActivity {
            process_id: process_id.unwrap_or_else(|| ExprOrStatic::Static(String::new())),
            propagate_all_child_variables: self.bool_attr(ext, "propagateAllChildVariables", true),
            propagate_all_parent_variables: self.bool_attr(
                ext,
                "propagateAllParentVariables",
                true,
            ),
            binding_type,
            version_tag,
            business_id: self
                .value(ext, "businessId", id)
                .filter(|v| v.as_static().is_none_or(|s| !s.is_empty())),
        }
    }

    pub(super) fn ad_hoc_sub_process(&mut self, node: NodeId, id: &str) -> AdHocSubProcess {
        let ad_hoc = self.extension(node, "adHoc", false);
        let definition = self.extension(node, "taskDefinition", false);
        let cancel_remaining_instances = self.bool_attr(node, "cancelRemainingInstances", true);
        let completion = self
            .bpmn_children(node, "completionCondition")
            .first()
            .copied();
        let completion_condition = completion.and_then(|c| {
            let value = self.text_value(c, id, "completionCondition");
            self.expression_only(c, value)
        });
        let mut result = AdHocSubProcess {
            active_elements_collection: None,
            completion_condition,
            cancel_remaining_instances,
            output_collection: None,
            output_element: None,
            job_worker: None,
            agent_type: self.agent_definition(node, true),
        };
        if let Some(ext) = ad_hoc {
            let n = self.node(ext);
            let active = n.attr("activeElementsCollection").filter(|v| !v.is_empty());
            if active.is_some() {
                result.active_elements_collection = self
                    .value(ext, "activeElementsCollection", id)
                    .and_then(|v| self.expression_only(ext, v));
            }
            let output_element = n.attr("outputElement").filter(|v| !v.is_empty());
            let output_collection = n.attr("outputCollection").filter(|v| !v.is_empty());
            if output_element.is_some() != output_collection.is_some() {
                self.error(
                    node,
                    format!(
                        "OutputElement and OutputCollection must both be set, or neither of them \
                         set. outputElement:{} and outputCollection:{}.",
                        n.attr("outputElement").unwrap_or("null"),
                        n.attr("outputCollection").unwrap_or("null")
                    ),
                );
            }
            if output_element.is_some() {
                result.output_element = self
                    .value(ext, "outputElement", id)
                    .and_then(|v| self.expression_only(ext, v));
            }
            result.output_collection = output_collection.map(str::to_owned);
        }
        if let Some(def) = definition {
            if !cancel_remaining_instances {
                self.error(
                    node,
                    "Must not define cancelRemainingInstances in combination with zeebe:taskDefinition.",
                );
            }
            if completion.is_some() {
                self.error(
                    node,
                    "Must not define completionCondition in combination with zeebe:taskDefinition.",
                );
            }
            if result.active_elements_collection.is_some() {
                self.error(
                    node,
                    "Must not define activeElementsCollection in combination with zeebe:taskDefinition.",
                );
            }
            result.job_worker = Some(self.job_worker(node, Some(def), id));
        }
        result
    }
}

/// Stands in for a missing message in a model that is rejected anyway.
pub(super) fn placeholder_message() -> MessageRef {
    MessageRef {
        message_id: String::new(),
        name: ExprOrStatic::Static(String::new()),
        correlation_key: None,
    }
}
