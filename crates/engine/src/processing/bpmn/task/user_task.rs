//! The user task (Zeebe's `UserTaskProcessor`): work for a person. A Camunda user task
//! (`zeebe:userTask`) is a USER_TASK the engine manages: CREATING, CREATED, then, with an
//! assignee, ASSIGNING and ASSIGNED; people assign, claim, update and complete it
//! (`processing/user_task`), and terminating the element cancels it. A job-worker user task
//! (no `zeebe:userTask`) is a job of type `io.camunda.zeebe:userTask` for an external task
//! list, with the task's properties in Zeebe's reserved headers.

use beeline_bpmn::{ElementData, UserTask, UserTaskImplementation};
use beeline_protocol::intent::{ProcessInstanceIntent as PI, UserTaskIntent};
use beeline_protocol::value::UserTaskRecord;

use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::user_tasks::{self, UserTaskProperties};
use crate::processing::bpmn::behavior::{jobs, subscriptions};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, Failure, Step};
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

    /// A Camunda user task is canceled with its element instance.
    fn on_terminate(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
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
        let task = stored.record();
        if stored.lifecycle() != Some(UserTaskLifecycle::Canceling) {
            bpmn.ctx
                .append_event(key, UserTaskIntent::Canceling, task.clone())?;
        }
        bpmn.ctx.append_event(key, UserTaskIntent::Canceled, task)?;
        Ok(false)
    }
}

/// USER_TASK CREATING (with the assignee the model gives), CREATED (without), the element
/// ELEMENT_ACTIVATED, then the assignment: ASSIGNING and ASSIGNED.
fn create(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    task: &UserTask,
    properties: UserTaskProperties,
) -> Result<(), ProcessingError> {
    let key = bpmn.ctx.next_key()?;
    let mut record = UserTaskRecord {
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
    record.assignee.clear();
    bpmn.ctx
        .append_event(key, UserTaskIntent::Created, record.clone())?;
    bpmn.write(PI::ElementActivated)?;
    if !properties.assignee.is_empty() {
        record.assignee = properties.assignee;
        record.changed_attributes = vec!["assignee".to_string()];
        bpmn.ctx
            .append_event(key, UserTaskIntent::Assigning, record.clone())?;
        bpmn.ctx
            .append_event(key, UserTaskIntent::Assigned, record)?;
    }
    Ok(())
}
