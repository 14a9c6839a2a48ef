use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;
use beeline_protocol::{Record, RejectionType};

use super::transition::Transition;
use super::{action_or, start, user_task_to};
use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::user_tasks::{copy_attribute, differs};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// The attributes an update may change, as Zeebe names them in `changedAttributes`.
const UPDATABLE: &[&str] = &[
    "candidateGroupsList",
    "candidateUsersList",
    "dueDate",
    "followUpDate",
    "priority",
];

/// `USER_TASK UPDATE`: the attributes the command names in `changedAttributes` take its
/// values (an empty value clears one): UPDATING (naming those that really change), the
/// `updating` listeners, UPDATED.
pub(crate) struct UserTaskUpdateProcessor;

impl CommandProcessor for UserTaskUpdateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<UserTaskRecord>(command)?;
        if let Some(unknown) = request
            .changed_attributes
            .iter()
            .find(|a| !UPDATABLE.contains(&a.as_str()))
        {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to update user task with key '{}', but the attribute '{unknown}' cannot be updated; these can: {}",
                    command.key,
                    UPDATABLE.join(", ")
                ),
            );
            return Ok(());
        }
        if request.changed_attributes.iter().any(|a| a == "priority")
            && !(0..=100).contains(&request.priority)
        {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to update user task with key '{}', but the priority {} is not in the range [0,100]",
                    command.key, request.priority
                ),
            );
            return Ok(());
        }
        let Some(mut task) = user_task_to(ctx, command, "update")? else {
            return Ok(());
        };
        let before = task.clone();
        // All of them updatable (checked above).
        for attribute in &request.changed_attributes {
            copy_attribute(&mut task, request, attribute);
        }
        // Only what the update really changes counts as changed.
        task.changed_attributes = request
            .changed_attributes
            .iter()
            .filter(|a| differs(&before, &task, a))
            .cloned()
            .collect();
        task.action = action_or(request, "update");
        ctx.append_event(command.key, UserTaskIntent::Updating, task.clone())?;
        start(ctx, command, Transition::Update, &task)
    }
}
