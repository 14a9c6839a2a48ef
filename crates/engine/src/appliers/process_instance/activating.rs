use beeline_protocol::Record;
use beeline_protocol::value::ProcessInstanceRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::model::{InstanceRole, deployed_element, is_joining};
use crate::processing::value_of;
use crate::state::EngineState;

/// `ELEMENT_ACTIVATING`: a new element instance in its flow scope, consuming the token(s) it
/// was reached by.
pub(crate) struct ElementActivatingApplier;

impl EventApplier for ElementActivatingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let record = value_of::<ProcessInstanceRecord>(event)?;
        let scope = record.flow_scope_key;
        state
            .element_instances_mut()
            .create(event.key, record, event.intent.value().into())?;
        if scope <= 0 {
            state
                .processes_mut()
                .set_running(record.process_definition_key, event.key, true);
            if record.parent_element_instance_key > 0 {
                // A process instance a call activity created: the call activity knows it, and
                // it is one deeper than its parent (an instance without depth is at 1).
                let parent_depth = state
                    .element_instances()
                    .get(record.parent_process_instance_key)?
                    .map_or(1, |parent| parent.process_depth.max(1));
                state
                    .element_instances_mut()
                    .update(record.parent_element_instance_key, |call| {
                        call.called_child_key = event.key
                    })?;
                state
                    .element_instances_mut()
                    .update(event.key, |child| child.process_depth = parent_depth + 1)?;
            }
            return Ok(());
        }
        state.variables_mut().set_parent(event.key, scope);
        let (process, index) = deployed_element(state, record)?;
        let element = &process.model[index];
        if InstanceRole::of(element, record) == InstanceRole::MultiInstanceInner {
            // The body counts its inner instances; the body took the token it was reached by.
            let mut loop_counter = 0;
            state.element_instances_mut().update(scope, |body| {
                body.loop_counter += 1;
                loop_counter = body.loop_counter;
            })?;
            return Ok(state
                .element_instances_mut()
                .update(event.key, |inner| inner.loop_counter = loop_counter)?);
        }
        let consumed = if is_joining(&process.model, index) {
            let mut consumed = 0;
            for &flow in &element.incoming {
                let flow_id = &process.model[flow].id;
                if state
                    .element_instances_mut()
                    .consume_taken_flow(scope, &element.id, flow_id)?
                {
                    consumed += 1;
                }
            }
            consumed
        } else {
            i32::from(!element.incoming.is_empty())
        };
        if consumed > 0 {
            state.element_instances_mut().update(scope, |s| {
                s.active_flows = (s.active_flows - consumed).max(0)
            })?;
        }
        Ok(())
    }
}
