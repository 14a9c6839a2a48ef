use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;
use beeline_protocol::{Record, RejectionType};

use super::transition::Transition;
use super::{action_or, assigned, start, user_task_to};
use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `USER_TASK CLAIM`: a person takes a task nobody (or they) hold: CLAIMING, ASSIGNED.
pub(crate) struct UserTaskClaimProcessor;

impl CommandProcessor for UserTaskClaimProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<UserTaskRecord>(command)?;
        let Some(task) = user_task_to(ctx, command, "claim")? else {
            return Ok(());
        };
        if request.assignee.trim().is_empty() {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to claim user task with key '{}', but provided assignee is empty",
                    command.key
                ),
            );
            return Ok(());
        }
        if !task.assignee.trim().is_empty() && task.assignee != request.assignee {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to claim user task with key '{}', but it has already been assigned",
                    command.key
                ),
            );
            return Ok(());
        }
        let task = assigned(task, &request.assignee, action_or(request, "claim"));
        ctx.append_event(command.key, UserTaskIntent::Claiming, task.clone())?;
        start(ctx, command, Transition::Claim, &task)
    }
}
