use beeline_protocol::Record;
use beeline_protocol::value::UserTaskRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::{StoredUserTask, UserTaskLifecycle};

/// `USER_TASK CREATING`: a new user task, and its element instance waits for it. The assignee
/// the record carries (the model's) is kept aside, to be assigned once the task is created.
pub(crate) struct UserTaskCreatingApplier;

impl EventApplier for UserTaskCreatingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let task = value_of::<UserTaskRecord>(event)?;
        let mut created = task.clone();
        created.assignee.clear();
        state.user_tasks_mut().store(
            event.key,
            StoredUserTask {
                record: Some(created.clone()),
                state: UserTaskLifecycle::Creating as u32,
                intermediate: Some(created),
                initial_assignee: task.assignee.clone(),
                ..StoredUserTask::default()
            },
        );
        state
            .element_instances_mut()
            .update(task.element_instance_key, |e| {
                e.user_task_key = event.key;
                e.task_listener_index = 0;
            })?;
        Ok(())
    }
}
