//! The user task (Zeebe's `UserTaskProcessor`): work for a person. A Camunda user task
//! (`zeebe:userTask`) is a USER_TASK the engine manages: CREATING, CREATED, then, with an
//! assignee, ASSIGNING and ASSIGNED, each transition running the task's listeners of its
//! event type; people assign, claim, update and complete it (`processing/user_task`), and
//! terminating the element cancels it. A job-worker user task
//! (no `zeebe:userTask`) is a job of type `io.camunda.zeebe:userTask` for an external task
//! list, with the task's properties in Zeebe's reserved headers.

use beeline_bpmn::{ElementData, TaskListenerEventType, UserTask, UserTaskImplementation};
use beeline_protocol::intent::{ProcessInstanceIntent as PI, UserTaskIntent};
use beeline_protocol::value::UserTaskRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::user_tasks::{self, UserTaskProperties};
use crate::processing::bpmn::behavior::{jobs, subscriptions};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Failure, Step};
use crate::processing::user_task::transition::{self, Transition};
use crate::state::values::UserTaskLifecycle;

pub(crate) struct UserTaskProcessor;

/// A job-worker user task's job has one retry, as in Zeebe.
const JOB_RETRIES: i32 = 1;

impl ElementProcessor for UserTaskProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let process = bpmn.process.clone();
        let ElementData::UserTask(task) = &process.model[bpmn.index].data else {
            return Err(Failure::Fatal(ProcessingError::Internal(format!(
                "'{}' is not a user task",
                bpmn.record.element_id
            ))));
        };
        let properties = user_tasks::evaluate(bpmn, task)?;
        subscriptions::open(bpmn)?;
        match task.implementation {
            UserTaskImplementation::JobWorker => {
                let headers =
                    user_tasks::job_headers(task, &properties, jobs::headers(&task.task_headers));
                jobs::create(
                    bpmn,
                    jobs::JobKind::BpmnElement,
                    user_tasks::USER_TASK_JOB_TYPE.to_string(),
                    JOB_RETRIES,
                    headers,
                )?;
                bpmn.write(PI::ElementActivated)?;
            }
            UserTaskImplementation::CamundaUserTask => create(bpmn, task, properties)?,
        }
        Ok(())
    }

    /// A Camunda user task is canceled with its element instance: CANCELING, its `canceling`
    /// listeners (the element waits for them), CANCELED. A request waiting for a transition
    /// the cancellation cuts short is refused.
    fn on_terminate(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
    ) -> Result<bool, ProcessingError> {
        cancel(bpmn, true)
    }
}

/// Cancels the Camunda user task of the terminating instance: CANCELING, its `canceling`
/// listeners when `with_listeners` (returns whether the element waits for them), CANCELED.
/// A request waiting for a transition the cancellation cuts short is refused. A modification
/// cancels without listeners, as Zeebe's does.
pub(crate) fn cancel(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    with_listeners: bool,
) -> Result<bool, ProcessingError> {
    let key = bpmn
        .instance()?
        .map_or(0, |instance| instance.user_task_key);
    if key <= 0 {
        return Ok(false);
    }
    let Some(stored) = bpmn.ctx.state().user_tasks().get(key)? else {
        return Ok(false);
    };
    let mut task = stored.record();
    task.changed_attributes.clear();
    task.action.clear();
    if let Some(request) = bpmn.ctx.state().transient().take_user_task_request(key) {
        let command = Record::command(key, UserTaskIntent::Complete, task.clone());
        let rejection = Record::rejection(
            &command,
            RejectionType::InvalidState,
            format!(
                "Expected to finish the transition of user task with key '{key}', but the user task was canceled meanwhile"
            ),
        );
        bpmn.ctx.answer(request, rejection);
    }
    if stored.lifecycle() != Some(UserTaskLifecycle::Canceling) {
        bpmn.ctx
            .append_event(key, UserTaskIntent::Canceling, task.clone())?;
    }
    if with_listeners && transition::has_listeners(bpmn, TaskListenerEventType::Canceling) {
        let step = transition::run_listener(bpmn, Transition::Cancel, &task, 0, &[]);
        bpmn.settle(step.map(|_| ()))?;
        return Ok(true);
    }
    bpmn.ctx.append_event(key, UserTaskIntent::Canceled, task)?;
    Ok(false)
}

/// USER_TASK CREATING (with the assignee the model gives), then its `creating` listeners, or
/// CREATED (without the assignee); the element ELEMENT_ACTIVATED; then the assignment:
/// ASSIGNING, its `assigning` listeners, ASSIGNED.
fn create(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    task: &UserTask,
    properties: UserTaskProperties,
) -> Result<(), ProcessingError> {
    let key = bpmn.ctx.next_key()?;
    let record = UserTaskRecord {
        user_task_key: key,
        assignee: properties.assignee.clone(),
        candidate_groups_list: properties.candidate_groups,
        candidate_users_list: properties.candidate_users,
        due_date: properties.due_date,
        follow_up_date: properties.follow_up_date,
        form_key: properties.form_key,
        changed_attributes: Vec::new(),
        variables: b"{}".to_vec(),
        action: String::new(),
        external_form_reference: properties.external_form_reference,
        custom_headers: jobs::headers(&task.task_headers),
        creation_timestamp: bpmn.ctx.now(),
        element_id: bpmn.record.element_id.clone(),
        element_instance_key: bpmn.key,
        bpmn_process_id: bpmn.record.bpmn_process_id.clone(),
        process_definition_version: bpmn.record.version,
        process_definition_key: bpmn.record.process_definition_key,
        process_instance_key: bpmn.record.process_instance_key,
        tenant_id: bpmn.record.tenant_id.clone(),
        priority: properties.priority,
        denied_reason: String::new(),
    };
    bpmn.ctx
        .append_event(key, UserTaskIntent::Creating, record.clone())?;
    if transition::has_listeners(bpmn, TaskListenerEventType::Creating) {
        // The element is ACTIVATED while the task's creation waits for its listeners (or an
        // incident of one of them).
        let stored = transition::stored(bpmn, key)?;
        let seen =
            transition::as_listeners_see_it(Transition::Create, &stored, &stored.intermediate());
        let step = transition::run_listener(bpmn, Transition::Create, &seen, 0, &[]);
        bpmn.settle(step.map(|_| ()))?;
        bpmn.write(PI::ElementActivated)?;
        return Ok(());
    }
    let mut created = record;
    created.assignee.clear();
    bpmn.ctx
        .append_event(key, UserTaskIntent::Created, created.clone())?;
    bpmn.write(PI::ElementActivated)?;
    if !properties.assignee.is_empty() {
        let step = transition::assign_after_creation(bpmn, created, &properties.assignee);
        bpmn.settle(step)?;
    }
    Ok(())
}
