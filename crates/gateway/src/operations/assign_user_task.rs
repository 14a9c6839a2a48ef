//! Assign a Camunda user task: `USER_TASK ASSIGN` on the partition of its key, or `CLAIM` when
//! the request may not take the task from someone else (`allowOverride: false`); unassigning
//! is an assignment to nobody.

use beeline_protocol::Record;
use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;

use super::{execute_on_key, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssignUserTask {
    pub user_task_key: i64,
    /// Who takes the task; empty to unassign it.
    pub assignee: String,
    /// Whether the task may be taken from someone who holds it already (Zeebe's default).
    pub allow_override: bool,
    /// What the user did, for the record (`assign`, `claim` or `unassign` when none).
    pub action: Option<String>,
}

pub(crate) fn command(request: &AssignUserTask) -> Result<Record, GatewayError> {
    let (intent, action) = if request.assignee.is_empty() {
        (UserTaskIntent::Assign, "unassign")
    } else if request.allow_override {
        (UserTaskIntent::Assign, "assign")
    } else {
        (UserTaskIntent::Claim, "claim")
    };
    Ok(Record::command(
        request.user_task_key,
        intent,
        UserTaskRecord {
            assignee: request.assignee.clone(),
            action: request.action.clone().unwrap_or_else(|| action.to_string()),
            ..UserTaskRecord::default()
        },
    ))
}

/// Assigns the task (or unassigns it, with an empty assignee).
pub async fn run(d: &Dispatcher, request: AssignUserTask) -> Result<(), GatewayError> {
    let command = command(&request)?;
    d.require(command.intent, "assigning user tasks")?;
    let event = execute_on_key(d, "userTaskKey", request.user_task_key, command).await?;
    value_of::<UserTaskRecord>(&event)?;
    Ok(())
}

/// The assignee of an assignment request, which must name someone.
pub fn assignee(assignee: &str) -> Result<String, GatewayError> {
    validate::not_empty("assignee", assignee)?;
    Ok(assignee.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(assignee: &str, allow_override: bool) -> AssignUserTask {
        AssignUserTask {
            user_task_key: 9,
            assignee: assignee.into(),
            allow_override,
            action: None,
        }
    }

    #[test]
    fn assign_claim_and_unassign_are_their_commands() {
        let assign = command(&request("ann", true)).unwrap();
        assert_eq!(assign.intent, UserTaskIntent::Assign.into());
        assert_eq!(
            assign.value_as::<UserTaskRecord>().unwrap().action,
            "assign"
        );
        let claim = command(&request("ann", false)).unwrap();
        assert_eq!(claim.intent, UserTaskIntent::Claim.into());
        assert_eq!(claim.value_as::<UserTaskRecord>().unwrap().assignee, "ann");
        let unassign = command(&request("", true)).unwrap();
        assert_eq!(unassign.intent, UserTaskIntent::Assign.into());
        assert_eq!(
            unassign.value_as::<UserTaskRecord>().unwrap().action,
            "unassign"
        );
        assert!(assignee("").is_err());
    }
}
