//! A Camunda user task's transitions (Zeebe's `UserTaskProcessor` with its command
//! processors): creating, assigning (assign, claim), updating, completing and canceling.
//! A transition starts with its `...ING` event, runs the task's listeners of its event type
//! one after another (jobs of kind TASK_LISTENER, each seeing the task as it will be, with the
//! corrections of the listeners before it), and ends with its last event (CREATED, ASSIGNED,
//! UPDATED, COMPLETED, CANCELED) carrying the corrections. A listener may deny an assignment,
//! an update or a completion: the task stays as it was. A client's request is answered when
//! the transition ends or is denied.

use beeline_bpmn::{ElementData, TaskListener, TaskListenerEventType};
use beeline_protocol::intent::{
    ProcessInstanceIntent as PI, UserTaskIntent, VariableDocumentIntent,
};
use beeline_protocol::value::UserTaskRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::jobs::{self, JobKind};
use crate::processing::bpmn::behavior::user_tasks::{diff, listener_headers};
use crate::processing::bpmn::behavior::variables::{Document, VariableOwner, merge_local};
use crate::processing::bpmn::{BpmnElementContext, Step};
use crate::state::values::{StoredUserTask, UserTaskLifecycle};

/// A transition of a user task, by the state it is in while under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transition {
    Create,
    Assign,
    Claim,
    Update,
    Complete,
    Cancel,
}

impl Transition {
    /// The transition under way in `lifecycle`, if one is.
    pub fn of(lifecycle: UserTaskLifecycle) -> Option<Self> {
        match lifecycle {
            UserTaskLifecycle::Creating => Some(Self::Create),
            UserTaskLifecycle::Assigning => Some(Self::Assign),
            UserTaskLifecycle::Claiming => Some(Self::Claim),
            UserTaskLifecycle::Updating => Some(Self::Update),
            UserTaskLifecycle::Completing => Some(Self::Complete),
            UserTaskLifecycle::Canceling => Some(Self::Cancel),
            UserTaskLifecycle::Created => None,
        }
    }

    /// The event type of the listeners it runs.
    pub fn event(self) -> TaskListenerEventType {
        match self {
            Self::Create => TaskListenerEventType::Creating,
            Self::Assign | Self::Claim => TaskListenerEventType::Assigning,
            Self::Update => TaskListenerEventType::Updating,
            Self::Complete => TaskListenerEventType::Completing,
            Self::Cancel => TaskListenerEventType::Canceling,
        }
    }
}

/// The `index`th listener of `event` of the user task element of `bpmn`.
fn listener(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    event: TaskListenerEventType,
    index: i32,
) -> Option<TaskListener> {
    let ElementData::UserTask(task) = &bpmn.element().data else {
        return None;
    };
    let index = usize::try_from(index).ok()?;
    task.task_listeners
        .iter()
        .filter(|listener| listener.event_type == event)
        .nth(index)
        .cloned()
}

/// Whether the user task element of `bpmn` has listeners of `event`.
pub(crate) fn has_listeners(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    event: TaskListenerEventType,
) -> bool {
    listener(bpmn, event, 0).is_some()
}

/// Creates the job of the `index`th listener of the transition, if there is one, for the task
/// as it will be (`task`, which changed `changed` so far): returns whether the transition now
/// waits for it. A listener whose type or retries fail to evaluate is an incident on the
/// element; resolving it runs the transition's listeners again from the first.
pub(crate) fn run_listener(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    transition: Transition,
    task: &UserTaskRecord,
    index: i32,
    changed: &[String],
) -> Step<bool> {
    let Some(listener) = listener(bpmn, transition.event(), index) else {
        return Ok(false);
    };
    let (job_type, retries) = jobs::evaluate(bpmn, &listener.job_type, &listener.retries)?;
    jobs::create(
        bpmn,
        JobKind::TaskListener(transition.event()),
        job_type,
        retries,
        listener_headers(task, changed),
    )?;
    Ok(true)
}

/// A transition started (its `...ING` event written): runs its first listener, keeping the
/// request of the command that started it waiting, or ends it at once.
pub(crate) fn started(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    transition: Transition,
    key: i64,
) -> Step<()> {
    let stored = stored(bpmn, key)?;
    let task = stored.intermediate();
    let changed = changed_so_far(&stored, &task);
    let seen = as_listeners_see_it(transition, &stored, &task);
    if run_listener(bpmn, transition, &seen, 0, &changed)? {
        let command = bpmn.command;
        if !bpmn.ctx.follow_up {
            bpmn.ctx
                .state()
                .transient()
                .await_user_task(key, command.position);
            bpmn.ctx.respond_later();
        }
        return Ok(());
    }
    finish(bpmn, transition, task)
}

/// Runs the listeners of the transition under way again from the first (after an incident
/// of one of them was resolved), or ends it.
pub(crate) fn restart(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    transition: Transition,
    key: i64,
) -> Step<()> {
    let stored = stored(bpmn, key)?;
    let task = stored.intermediate();
    let changed = changed_so_far(&stored, &task);
    let seen = as_listeners_see_it(transition, &stored, &task);
    if run_listener(bpmn, transition, &seen, 0, &changed)? {
        return Ok(());
    }
    finish(bpmn, transition, task)
}

/// The user task `key` as stored.
pub(crate) fn stored(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    key: i64,
) -> Result<StoredUserTask, ProcessingError> {
    bpmn.ctx
        .state()
        .user_tasks()
        .get(key)?
        .ok_or_else(|| ProcessingError::Internal(format!("user task {key} is not in the state")))
}

/// What the transition changed so far: the attributes in which `task` differs from the task
/// before it, and its variables, when it is an update of them.
pub(crate) fn changed_so_far(stored: &StoredUserTask, task: &UserTaskRecord) -> Vec<String> {
    let mut changed = diff(&stored.record(), task);
    if stored.variable_document.is_some() {
        changed.push("variables".to_string());
    }
    changed
}

/// The task as the transition's listeners see it: during the creation, with the assignee the
/// model gives it (assigned once it is created).
pub(crate) fn as_listeners_see_it(
    transition: Transition,
    stored: &StoredUserTask,
    task: &UserTaskRecord,
) -> UserTaskRecord {
    let mut seen = task.clone();
    if transition == Transition::Create && seen.assignee.is_empty() {
        seen.assignee = stored.initial_assignee.clone();
    }
    seen
}

/// Ends the transition with its last event, the task being `task` (with the corrections of
/// its listeners), and answers the request that waits for it.
pub(crate) fn finish(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    transition: Transition,
    mut task: UserTaskRecord,
) -> Step<()> {
    let key = task.user_task_key;
    let stored = stored(bpmn, key)?;
    task.changed_attributes = changed_so_far(&stored, &task);
    if let Some(update) = &stored.variable_document {
        // The update's variables are set now, locally to the task.
        let variables = Document::parse(&update.variables).map_err(ProcessingError::Internal)?;
        let owner = VariableOwner::of(&bpmn.record);
        merge_local(bpmn.ctx, bpmn.key, &variables, &owner)?;
    }
    let intent = match transition {
        Transition::Create => UserTaskIntent::Created,
        Transition::Assign | Transition::Claim => UserTaskIntent::Assigned,
        Transition::Update => UserTaskIntent::Updated,
        Transition::Complete => UserTaskIntent::Completed,
        Transition::Cancel => UserTaskIntent::Canceled,
    };
    let mut index = bpmn.ctx.append_event(key, intent, task.clone())?;
    let mut answer = Record::event(key, intent, task.clone());
    if let Some(update) = stored.variable_document.clone() {
        let update_key = stored.variable_document_key;
        index =
            bpmn.ctx
                .append_event(update_key, VariableDocumentIntent::Updated, update.clone())?;
        answer = Record::event(update_key, VariableDocumentIntent::Updated, update);
    }
    match bpmn.ctx.state().transient().take_user_task_request(key) {
        Some(request) => bpmn.ctx.answer(request, answer),
        None => bpmn.ctx.respond(index),
    }
    match transition {
        Transition::Create => {
            if !stored.initial_assignee.is_empty() {
                assign_after_creation(bpmn, task, &stored.initial_assignee)?;
            }
        }
        Transition::Complete => {
            let element = bpmn.record.clone();
            bpmn.ctx
                .append_command(bpmn.key, PI::CompleteElement, element);
        }
        Transition::Cancel => {
            let element = bpmn.record.clone();
            bpmn.ctx
                .append_command(bpmn.key, PI::ContinueTerminatingElement, element);
        }
        Transition::Assign | Transition::Claim | Transition::Update => {}
    }
    Ok(())
}

/// The task is created with the assignee the model gave it: ASSIGNING, then its `assigning`
/// listeners or ASSIGNED.
pub(crate) fn assign_after_creation(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    created: UserTaskRecord,
    assignee: &str,
) -> Step<()> {
    let key = created.user_task_key;
    let mut task = created.clone();
    task.assignee = assignee.to_string();
    task.changed_attributes = vec!["assignee".to_string()];
    bpmn.ctx
        .append_event(key, UserTaskIntent::Assigning, task.clone())?;
    let changed = task.changed_attributes.clone();
    if run_listener(bpmn, Transition::Assign, &task, 0, &changed)? {
        return Ok(());
    }
    bpmn.ctx.append_event(key, UserTaskIntent::Assigned, task)?;
    Ok(())
}

/// A listener denied the transition: the task stays as it was (`..._DENIED`, with the
/// reason), and the request that waits for the transition is rejected.
pub(crate) fn denied(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    transition: Transition,
    key: i64,
    reason: &str,
) -> Result<(), ProcessingError> {
    let stored = stored(bpmn, key)?;
    let mut task = stored.record();
    task.denied_reason = reason.to_string();
    let (intent, request_intent, what) = match transition {
        Transition::Complete => (
            UserTaskIntent::CompletionDenied,
            UserTaskIntent::Complete,
            "Completion",
        ),
        Transition::Assign => (
            UserTaskIntent::AssignmentDenied,
            UserTaskIntent::Assign,
            "Assignment",
        ),
        Transition::Claim => (
            UserTaskIntent::AssignmentDenied,
            UserTaskIntent::Claim,
            "Assignment",
        ),
        Transition::Update => (
            UserTaskIntent::UpdateDenied,
            UserTaskIntent::Update,
            "Update",
        ),
        Transition::Create | Transition::Cancel => {
            return Err(ProcessingError::Internal(format!(
                "a listener denied the {transition:?} transition of user task {key}, which cannot be denied"
            )));
        }
    };
    bpmn.ctx.append_event(key, intent, task.clone())?;
    let rejection = match stored.variable_document {
        Some(update) => {
            // An update of the task's variables: denied with it.
            let update_key = stored.variable_document_key;
            bpmn.ctx.append_event(
                update_key,
                VariableDocumentIntent::UpdateDenied,
                update.clone(),
            )?;
            Record::rejection(
                &Record::command(update_key, VariableDocumentIntent::Update, update),
                RejectionType::InvalidState,
                format!(
                    "Variable update for user task instance with key '{}' was denied by Task Listener. Reason to deny: '{reason}'",
                    bpmn.key
                ),
            )
        }
        None => Record::rejection(
            &Record::command(key, request_intent, task),
            RejectionType::InvalidState,
            format!(
                "{what} of the User Task with key '{key}' was denied by Task Listener. Reason to deny: '{reason}'"
            ),
        ),
    };
    if let Some(request) = bpmn.ctx.state().transient().take_user_task_request(key) {
        bpmn.ctx.answer(request, rejection);
    }
    Ok(())
}
