//! Reads one flow node: its kind-specific data, then what every flow node may have.

use super::builder::ProcessBuilder;
use crate::model::*;
use crate::xml::NodeId;

impl ProcessBuilder<'_, '_> {
    pub(super) fn flow_node(&mut self, node: NodeId, scope: ElementIndex) {
        let local = self.node(node).local.as_str();
        let index = self.new_element(node, scope, ElementData::Task);
        let id = self
            .elements
            .get(index.index())
            .map(|e| e.id.clone())
            .unwrap_or_default();
        let data = match local {
            "task" => ElementData::Task,
            "manualTask" => ElementData::ManualTask,
            "serviceTask" => ElementData::ServiceTask(self.service_task(node, &id)),
            "sendTask" => ElementData::SendTask(self.send_task(node, &id)),
            "receiveTask" => ElementData::ReceiveTask(self.receive_task(node)),
            "userTask" => ElementData::UserTask(self.user_task(node, &id)),
            "scriptTask" => ElementData::ScriptTask(self.script_task(node, &id)),
            "businessRuleTask" => ElementData::BusinessRuleTask(self.business_rule_task(node, &id)),
            "callActivity" => ElementData::CallActivity(self.call_activity(node, &id)),
            "subProcess" if self.bool_attr(node, "triggeredByEvent", false) => {
                ElementData::EventSubProcess
            }
            "subProcess" => ElementData::SubProcess,
            "adHocSubProcess" => ElementData::AdHocSubProcess(self.ad_hoc_sub_process(node, &id)),
            "exclusiveGateway" => ElementData::ExclusiveGateway(self.gateway(node, index)),
            "inclusiveGateway" => ElementData::InclusiveGateway(self.gateway(node, index)),
            "parallelGateway" => ElementData::ParallelGateway,
            "eventBasedGateway" => ElementData::EventBasedGateway,
            "startEvent" => ElementData::StartEvent(self.start_event(node, index, scope, &id)),
            "endEvent" => ElementData::EndEvent(self.throw_event(node, index, &id, true)),
            "intermediateThrowEvent" => {
                ElementData::IntermediateThrowEvent(self.throw_event(node, index, &id, false))
            }
            "intermediateCatchEvent" => {
                ElementData::IntermediateCatchEvent(self.catch_event(node, index, &id))
            }
            "boundaryEvent" => ElementData::BoundaryEvent(self.boundary_event(node, index, &id)),
            // `is_flow_node` admits only the names above.
            _ => ElementData::Task,
        };
        let is_scope = matches!(
            data,
            ElementData::SubProcess
                | ElementData::EventSubProcess
                | ElementData::AdHocSubProcess(_)
        );
        if let Some(e) = self.elements.get_mut(index.index()) {
            e.data = data;
        }
        if is_scope {
            self.open_scope(node, index);
        }

        let io_mapping = self.io_mapping(node, &id);
        let execution_listeners = self.execution_listeners(node, &id, index);
        let properties = self.properties(node);
        let is_activity = self
            .elements
            .get(index.index())
            .is_some_and(Element::is_activity);
        let multi_instance = if is_activity {
            self.multi_instance(node, &id)
        } else {
            None
        };
        let is_for_compensation = is_activity && self.bool_attr(node, "isForCompensation", false);
        if let Some(e) = self.elements.get_mut(index.index()) {
            e.io_mapping = io_mapping;
            e.execution_listeners = execution_listeners;
            e.properties = properties;
            e.multi_instance = multi_instance;
            e.is_for_compensation = is_for_compensation;
        }
        self.add_to_scope(scope, index);
    }

    fn gateway(&mut self, node: NodeId, index: ElementIndex) -> Gateway {
        if let Some(default) = self.node(node).attr("default") {
            self.pending_defaults
                .push((index, node, default.to_owned()));
        }
        Gateway::default()
    }

    /// `bpmn:multiInstanceLoopCharacteristics` with its `zeebe:loopCharacteristics`.
    fn multi_instance(&mut self, node: NodeId, element_id: &str) -> Option<MultiInstance> {
        for standard in self.bpmn_children(node, "standardLoopCharacteristics") {
            self.error(
                standard,
                "Loop characteristics of type 'StandardLoopCharacteristics' are not supported, \
                 use multiInstanceLoopCharacteristics",
            );
        }
        let mi = *self
            .bpmn_children(node, "multiInstanceLoopCharacteristics")
            .first()?;
        let loops = self.extensions(mi, "loopCharacteristics");
        if loops.len() != 1 {
            self.error(
                mi,
                "Must have exactly one 'zeebe:loopCharacteristics' extension element",
            );
        }
        let completion_condition = self
            .bpmn_children(mi, "completionCondition")
            .first()
            .map(|&c| self.text_value(c, element_id, "completionCondition"));
        let is_sequential = self.bool_attr(mi, "isSequential", false);
        let ext = *loops.first()?;
        let n = self.node(ext);
        let input_collection = match n.attr("inputCollection").filter(|v| !v.is_empty()) {
            None => {
                self.error(
                    ext,
                    "Attribute 'inputCollection' must be present and not empty",
                );
                None
            }
            Some(_) => self
                .value(ext, "inputCollection", element_id)
                .and_then(|v| self.expression_only(ext, v)),
        };
        let output_collection = n
            .attr("outputCollection")
            .filter(|v| !v.is_empty())
            .map(str::to_owned);
        let output_element = match n.attr("outputElement").filter(|v| !v.is_empty()) {
            None => None,
            Some(_) => self
                .value(ext, "outputElement", element_id)
                .and_then(|v| self.expression_only(ext, v)),
        };
        match (
            output_collection.is_some(),
            n.attr("outputElement").is_some_and(|v| !v.is_empty()),
        ) {
            (true, false) => self.error(
                ext,
                "Attribute 'outputElement' must be present if the attribute 'outputCollection' is set",
            ),
            (false, true) => self.error(
                ext,
                "Attribute 'outputCollection' must be present if the attribute 'outputElement' is set",
            ),
            _ => {}
        }
        Some(MultiInstance {
            is_sequential,
            input_collection: input_collection?,
            input_element: n
                .attr("inputElement")
                .filter(|v| !v.is_empty())
                .map(str::to_owned),
            output_collection,
            output_element,
            completion_condition,
        })
    }
}
