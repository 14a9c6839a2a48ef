use beeline_protocol::Record;
use beeline_protocol::value::UserTaskRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::UserTaskLifecycle;

/// `ASSIGNING`, `CLAIMING`, `UPDATING`, `COMPLETING`, `CANCELING`: a transition starts (the
/// state registered with each). The task stays as it was; the event's record is what it will
/// be, and what the transition's listeners see. Its listeners count from the first.
pub(crate) struct UserTaskTransitionStartedApplier(pub UserTaskLifecycle);

impl EventApplier for UserTaskTransitionStartedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let task = value_of::<UserTaskRecord>(event)?;
        let mut stored = state.user_tasks_mut().get(event.key)?.unwrap_or_default();
        if stored.record.is_none() {
            stored.record = Some(task.clone());
        }
        stored.state = self.0 as u32;
        stored.intermediate = Some(task.clone());
        state.user_tasks_mut().store(event.key, stored);
        state
            .element_instances_mut()
            .update(task.element_instance_key, |e| e.task_listener_index = 0)?;
        Ok(())
    }
}

/// `CORRECTED`: a listener corrected what the transition under way will leave.
pub(crate) struct UserTaskCorrectedApplier;

impl EventApplier for UserTaskCorrectedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let task = value_of::<UserTaskRecord>(event)?;
        if let Some(mut stored) = state.user_tasks_mut().get(event.key)? {
            stored.intermediate = Some(task.clone());
            state.user_tasks_mut().store(event.key, stored);
        }
        Ok(())
    }
}

/// `CREATED`, `ASSIGNED`, `UPDATED`: the transition is done; the task is as the event says.
pub(crate) struct UserTaskTransitionedApplier;

impl EventApplier for UserTaskTransitionedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let task = value_of::<UserTaskRecord>(event)?;
        let mut stored = state.user_tasks_mut().get(event.key)?.unwrap_or_default();
        stored.record = Some(task.clone());
        stored.state = UserTaskLifecycle::Created as u32;
        stored.intermediate = None;
        stored.variable_document_key = 0;
        stored.variable_document = None;
        state.user_tasks_mut().store(event.key, stored);
        Ok(())
    }
}

/// `COMPLETION_DENIED`, `ASSIGNMENT_DENIED`, `UPDATE_DENIED`: a listener denied the
/// transition; the task stays as it was, with the corrections dropped.
pub(crate) struct UserTaskDeniedApplier;

impl EventApplier for UserTaskDeniedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        if let Some(mut stored) = state.user_tasks_mut().get(event.key)? {
            stored.state = UserTaskLifecycle::Created as u32;
            stored.intermediate = None;
            stored.variable_document_key = 0;
            stored.variable_document = None;
            state.user_tasks_mut().store(event.key, stored);
        }
        Ok(())
    }
}
