use beeline_protocol::Record;
use beeline_protocol::value::UserTaskRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::UserTaskLifecycle;

/// `USER_TASK CREATING`: a new user task, and its element instance waits for it.
pub(crate) struct UserTaskCreatingApplier;

impl EventApplier for UserTaskCreatingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let task = value_of::<UserTaskRecord>(event)?;
        state
            .user_tasks_mut()
            .put(event.key, task, UserTaskLifecycle::Creating);
        state
            .element_instances_mut()
            .update(task.element_instance_key, |e| e.user_task_key = event.key)?;
        Ok(())
    }
}
