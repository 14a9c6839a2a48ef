use beeline_bpmn::{ElementData, EventDefinition};
use beeline_protocol::Record;
use beeline_protocol::intent::ProcessInstanceIntent;
use beeline_protocol::value::ProcessInstanceRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::model::{InstanceRole, can_be_triggered, deployed_element};
use crate::processing::value_of;
use crate::state::{EngineState, document};

/// `ELEMENT_COMPLETED`, `ELEMENT_TERMINATED`: the instance, its variables and the tokens
/// waiting inside it are gone. A terminate end event also interrupts its flow scope.
pub(crate) struct ElementEndedApplier;

impl EventApplier for ElementEndedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessInstanceRecord>(event)?;
        let (process, index) = deployed_element(state, record)?;
        let element = &process.model[index];
        match InstanceRole::of(element, record) {
            InstanceRole::MultiInstanceBody => {
                let size = state
                    .element_instances()
                    .get(event.key)?
                    .map_or(0, |body| body.input_collection_size);
                state
                    .multi_instance_mut()
                    .remove_input_collection(event.key, size);
            }
            InstanceRole::MultiInstanceInner => {
                let completed = event.intent == ProcessInstanceIntent::ElementCompleted.into();
                state
                    .element_instances_mut()
                    .update(record.flow_scope_key, |body| {
                        if completed {
                            body.completed_children += 1;
                        } else {
                            body.terminated_children += 1;
                        }
                    })?;
            }
            InstanceRole::Element => {}
        }
        if event.intent == ProcessInstanceIntent::ElementCompleted.into()
            && record.flow_scope_key <= 0
            && record.parent_element_instance_key > 0
        {
            hand_variables_to_call_activity(state, event.key, record)?;
        }
        state.element_instances_mut().remove(event.key)?;
        if record.flow_scope_key <= 0 {
            state
                .processes_mut()
                .set_running(record.process_definition_key, event.key, false);
        }
        // Only a flow scope (the process, a sub-process) counts the flows taken into it.
        if element.scope.is_some() {
            state.element_instances_mut().clear_taken_flows(event.key)?;
        }
        state.variables_mut().remove_scope(event.key)?;
        // An event for this instance that it ended before catching.
        if can_be_triggered(element) {
            state.event_triggers_mut().remove(event.key)?;
        }
        if record.flow_scope_key <= 0 && process.started_by_events() {
            // A process instance a message started frees its correlation key.
            state.messages_mut().release_correlation_key(event.key)?;
        }
        if event.intent == ProcessInstanceIntent::ElementCompleted.into()
            && record.flow_scope_key > 0
            && matches!(element.data, ElementData::EndEvent(_))
            && matches!(element.event_definition(), Some(EventDefinition::Terminate))
        {
            state
                .element_instances_mut()
                .interrupt(record.flow_scope_key)?;
        }
        Ok(())
    }
}

/// A process instance a call activity created completed: its variables are what the call
/// activity completes with, if it maps them (output mappings) or takes them all
/// (`propagateAllChildVariables`, the default); otherwise they are dropped with it.
fn hand_variables_to_call_activity(
    state: &mut EngineState<'_>,
    child: i64,
    record: &ProcessInstanceRecord,
) -> Result<(), ProcessingError> {
    let Some(call) = state
        .element_instances()
        .get(record.parent_element_instance_key)?
    else {
        return Ok(());
    };
    let (process, index) = deployed_element(state, &call.record())?;
    let element = &process.model[index];
    let takes_variables = match &element.data {
        ElementData::CallActivity(called) => {
            called.propagate_all_child_variables || !element.io_mapping.outputs.is_empty()
        }
        _ => false,
    };
    if !takes_variables {
        return Ok(());
    }
    let variables = state.variables().local(child)?;
    let document = document(
        variables
            .iter()
            .map(|(n, v)| (n.as_str(), v.value.as_str())),
    );
    state
        .element_instances_mut()
        .update(call.key, |call| call.completion_variables = Some(document))?;
    Ok(())
}
