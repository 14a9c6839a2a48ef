use beeline_protocol::Record;
use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;

use super::transition::{self, Transition};
use crate::error::ProcessingError;
use crate::processing::bpmn::BpmnElementContext;
use crate::processing::bpmn::behavior::user_tasks::{copy_attribute, differs};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::StoredUserTask;

/// The user task a listener's job was for, with the transition under way and the context of
/// its element instance; none when the task or the transition is gone meanwhile.
fn under_way<'c, 'a, 's>(
    ctx: &'c mut ProcessingContext<'a, 's>,
    command: &'c Record,
) -> Result<Option<(StoredUserTask, Transition, BpmnElementContext<'c, 'a, 's>)>, ProcessingError> {
    let Some(stored) = ctx.state().user_tasks().get(command.key)? else {
        return Ok(None);
    };
    let Some(transition) = stored.lifecycle().and_then(Transition::of) else {
        return Ok(None);
    };
    let element = stored.record().element_instance_key;
    let Some(instance) = ctx.state().element_instances().get(element)? else {
        return Ok(None);
    };
    let bpmn = BpmnElementContext::of_instance(ctx, command, &instance)?;
    Ok(Some((stored, transition, bpmn)))
}

/// `USER_TASK COMPLETE_TASK_LISTENER`: a listener's job completed, with the task as the
/// listener corrected it (the attributes it corrected in `changedAttributes`). Corrections
/// that change something are written as CORRECTED; then the next listener runs, or the
/// transition ends with them.
pub(crate) struct CompleteTaskListenerProcessor;

impl CommandProcessor for CompleteTaskListenerProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<UserTaskRecord>(command)?.clone();
        let Some((stored, transition, mut bpmn)) = under_way(ctx, command)? else {
            return Ok(());
        };
        let mut task = stored.intermediate();
        let mut corrected = Vec::new();
        for attribute in &request.changed_attributes {
            if differs(&task, &request, attribute) {
                copy_attribute(&mut task, &request, attribute);
                corrected.push(attribute.clone());
            }
        }
        if !corrected.is_empty() {
            task.changed_attributes = corrected;
            bpmn.ctx
                .append_event(command.key, UserTaskIntent::Corrected, task.clone())?;
        }
        let index = bpmn.instance()?.map_or(0, |i| i.task_listener_index);
        let seen = transition::as_listeners_see_it(transition, &stored, &task);
        let changed = transition::changed_so_far(&stored, &task);
        let step = match transition::run_listener(&mut bpmn, transition, &seen, index, &changed) {
            Ok(true) => Ok(()),
            Ok(false) => transition::finish(&mut bpmn, transition, task),
            Err(failure) => Err(failure),
        };
        bpmn.settle(step)
    }
}

/// `USER_TASK DENY_TASK_LISTENER`: a listener denied the transition under way.
pub(crate) struct DenyTaskListenerProcessor;

impl CommandProcessor for DenyTaskListenerProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let reason = value_of::<UserTaskRecord>(command)?.denied_reason.clone();
        let Some((_, transition, mut bpmn)) = under_way(ctx, command)? else {
            return Ok(());
        };
        transition::denied(&mut bpmn, transition, command.key, &reason)
    }
}
