use beeline_protocol::Record;
use beeline_protocol::value::UserTaskRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::processing::value_of;
use crate::state::EngineState;
use crate::state::values::UserTaskLifecycle;

/// A user task event that moves it to a lifecycle state with the record it carries:
/// `CREATED`, `ASSIGNED` and `UPDATED` end a transition (state `CREATED`); `ASSIGNING`,
/// `CLAIMING`, `UPDATING`, `COMPLETING` and `CANCELING` start one (registered with each).
pub(crate) struct UserTaskTransitionedApplier(pub UserTaskLifecycle);

impl EventApplier for UserTaskTransitionedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let task = value_of::<UserTaskRecord>(event)?;
        state.user_tasks_mut().put(event.key, task, self.0);
        Ok(())
    }
}
