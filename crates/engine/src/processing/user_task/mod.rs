//! Commands people send about Camunda user tasks (over REST): assign, claim, update and
//! complete. Each acts on a task in state CREATED (none is under way) and answers with the
//! transition's last event.

mod assign;
mod claim;
mod complete;
mod update;

use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;
use beeline_protocol::{Record, RejectionType};

use super::{ProcessingContext, Processors};
use crate::error::ProcessingError;
use crate::state::values::UserTaskLifecycle;

pub(super) fn register(processors: &mut Processors) {
    processors.register(UserTaskIntent::Assign, assign::UserTaskAssignProcessor);
    processors.register(UserTaskIntent::Claim, claim::UserTaskClaimProcessor);
    processors.register(UserTaskIntent::Update, update::UserTaskUpdateProcessor);
    processors.register(
        UserTaskIntent::Complete,
        complete::UserTaskCompleteProcessor,
    );
}

/// The user task a command is about, in state CREATED; otherwise the command is rejected as
/// Zeebe does (NOT_FOUND, or INVALID_STATE naming the state it is in).
fn user_task_to(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    action: &str,
) -> Result<Option<UserTaskRecord>, ProcessingError> {
    let Some(stored) = ctx.state().user_tasks().get(command.key)? else {
        ctx.reject(
            command,
            RejectionType::NotFound,
            format!(
                "Expected to {action} user task with key '{}', but no such user task was found",
                command.key
            ),
        );
        return Ok(None);
    };
    let lifecycle = stored.lifecycle();
    if lifecycle != Some(UserTaskLifecycle::Created) {
        ctx.reject(
            command,
            RejectionType::InvalidState,
            format!(
                "Expected to {action} user task with key '{}', but it is in state '{}'",
                command.key,
                lifecycle.map_or("UNKNOWN", UserTaskLifecycle::name)
            ),
        );
        return Ok(None);
    }
    Ok(Some(stored.record()))
}

/// The action a command names, or the one it stands for.
fn action_or(request: &UserTaskRecord, default: &str) -> String {
    if request.action.is_empty() {
        default.to_string()
    } else {
        request.action.clone()
    }
}

/// The task with `assignee`, naming it as changed when it is.
fn assigned(mut task: UserTaskRecord, assignee: &str, action: String) -> UserTaskRecord {
    task.changed_attributes.clear();
    if task.assignee != assignee {
        task.assignee = assignee.to_string();
        task.changed_attributes.push("assignee".to_string());
    }
    task.action = action;
    task
}
