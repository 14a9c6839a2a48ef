//! The event sub-process (Zeebe's `EventSubProcessProcessor`): started by the event its start
//! event waited for, in the scope that waited; it starts at that start event, which takes the
//! event.

use beeline_protocol::intent::ProcessInstanceIntent as PI;

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::{events, subscriptions};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Failure, Step};

pub(crate) struct EventSubProcessProcessor;

impl ElementProcessor for EventSubProcessProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        subscriptions::open(bpmn)?;
        bpmn.write(PI::ElementActivated)?;
        let start = events::start_of(&bpmn.process.model, bpmn.index);
        let start_id = bpmn.process.model[start].id.clone();
        let waiting = bpmn
            .ctx
            .state()
            .event_triggers()
            .of_scope(bpmn.record.flow_scope_key)?
            .into_iter()
            .find(|(_, event)| event.target_element_id == start_id);
        let Some((key, _)) = waiting else {
            return Err(Failure::Fatal(ProcessingError::Internal(format!(
                "event sub-process '{}' started without an event",
                bpmn.record.element_id
            ))));
        };
        let process = bpmn.process.clone();
        let record = bpmn.record.clone();
        events::activate(bpmn.ctx, &process, key, start, bpmn.key, &record);
        Ok(())
    }
}
