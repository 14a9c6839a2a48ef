use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;
use beeline_protocol::{Record, RejectionType};

use super::transition::Transition;
use super::{action_or, start, user_task_to};
use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::variables::check_document;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `USER_TASK COMPLETE`: the person is done: COMPLETING, the `completing` listeners, COMPLETED
/// with the variables given, and the element completes with them.
pub(crate) struct UserTaskCompleteProcessor;

impl CommandProcessor for UserTaskCompleteProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<UserTaskRecord>(command)?;
        // Read when the element completes: only checked here.
        if let Err(reason) = check_document(&request.variables) {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to complete user task with key '{}' with variables, but {reason}",
                    command.key
                ),
            );
            return Ok(());
        }
        let Some(mut task) = user_task_to(ctx, command, "complete")? else {
            return Ok(());
        };
        task.variables = if request.variables.iter().all(u8::is_ascii_whitespace) {
            b"{}".to_vec()
        } else {
            request.variables.clone()
        };
        task.action = action_or(request, "complete");
        task.changed_attributes.clear();
        ctx.append_event(command.key, UserTaskIntent::Completing, task.clone())?;
        start(ctx, command, Transition::Complete, &task)
    }
}
