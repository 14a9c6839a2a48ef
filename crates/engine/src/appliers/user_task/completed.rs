use beeline_protocol::Record;
use beeline_protocol::value::UserTaskRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;

/// `USER_TASK COMPLETED`: the task is done; its element instance completes with its
/// variables.
pub(crate) struct UserTaskCompletedApplier;

impl EventApplier for UserTaskCompletedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let task = value_of::<UserTaskRecord>(event)?;
        state.user_tasks_mut().remove(event.key);
        let variables = task.variables.clone();
        state
            .element_instances_mut()
            .update(task.element_instance_key, |e| {
                e.user_task_key = 0;
                e.completion_variables = Some(variables);
            })?;
        Ok(())
    }
}
