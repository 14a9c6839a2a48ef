//! Commands people send about Camunda user tasks (over REST): assign, claim, update and
//! complete. Each acts on a task in state CREATED (none is under way), starts its transition
//! and answers with the transition's last event, once the task's listeners are done
//! (`transition.rs`). Completed and denied listener jobs come back as COMPLETE_TASK_LISTENER
//! and DENY_TASK_LISTENER.

mod assign;
mod claim;
mod complete;
mod listener;
pub(crate) mod transition;
mod update;

use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;
use beeline_protocol::{Record, RejectionType};

use super::{ProcessingContext, Processors};
use crate::error::ProcessingError;
use crate::processing::bpmn::BpmnElementContext;
use crate::state::values::UserTaskLifecycle;

pub(super) fn register(processors: &mut Processors) {
    processors.register(UserTaskIntent::Assign, assign::UserTaskAssignProcessor);
    processors.register(UserTaskIntent::Claim, claim::UserTaskClaimProcessor);
    processors.register(UserTaskIntent::Update, update::UserTaskUpdateProcessor);
    processors.register(
        UserTaskIntent::Complete,
        complete::UserTaskCompleteProcessor,
    );
    processors.register(
        UserTaskIntent::CompleteTaskListener,
        listener::CompleteTaskListenerProcessor,
    );
    processors.register(
        UserTaskIntent::DenyTaskListener,
        listener::DenyTaskListenerProcessor,
    );
}

/// The user task a command is about, in state CREATED; otherwise the command is rejected as
/// Zeebe does (NOT_FOUND, or INVALID_STATE naming the state it is in).
fn user_task_to(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    action: &str,
) -> Result<Option<UserTaskRecord>, ProcessingError> {
    // A user task of a tenant the caller may not act for is not there for it.
    let stored = ctx.state().user_tasks().get(command.key)?;
    let Some(stored) = stored.filter(|s| {
        command.authorized_tenants.is_none()
            || s.record
                .as_ref()
                .is_some_and(|r| command.is_authorized_for(&r.tenant_id))
    }) else {
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

/// Starts `transition` of the user task `key`, whose `...ING` event was just written, in the
/// context of its element instance.
fn start(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
    transition: transition::Transition,
    task: &UserTaskRecord,
) -> Result<(), ProcessingError> {
    let Some(instance) = ctx
        .state()
        .element_instances()
        .get(task.element_instance_key)?
    else {
        return Err(ProcessingError::Internal(format!(
            "the element instance {} of user task {} is gone",
            task.element_instance_key, task.user_task_key
        )));
    };
    let mut bpmn = BpmnElementContext::of_instance(ctx, command, &instance)?;
    let step = transition::started(&mut bpmn, transition, task.user_task_key);
    bpmn.settle(step)
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
