use beeline_protocol::Record;
use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;

use super::transition::Transition;
use super::{action_or, assigned, start, user_task_to};
use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `USER_TASK ASSIGN`: the task gets the assignee (an empty one unassigns it): ASSIGNING,
/// ASSIGNED.
pub(crate) struct UserTaskAssignProcessor;

impl CommandProcessor for UserTaskAssignProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<UserTaskRecord>(command)?;
        let Some(task) = user_task_to(ctx, command, "assign")? else {
            return Ok(());
        };
        let task = assigned(task, &request.assignee, action_or(request, "assign"));
        ctx.append_event(command.key, UserTaskIntent::Assigning, task.clone())?;
        start(ctx, command, Transition::Assign, &task)
    }
}
