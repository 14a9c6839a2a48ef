//! Update a Camunda user task: `USER_TASK UPDATE` on the partition of its key, changing the
//! attributes the request names (an empty value clears one).

use beeline_protocol::Record;
use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;

use super::{execute_on_key, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;

/// The attributes to change; `None` keeps one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateUserTask {
    pub user_task_key: i64,
    pub due_date: Option<String>,
    pub follow_up_date: Option<String>,
    pub candidate_users: Option<Vec<String>>,
    pub candidate_groups: Option<Vec<String>>,
    pub priority: Option<i32>,
    /// What the user did, for the record (`update` when none).
    pub action: Option<String>,
}

pub(crate) fn command(request: &UpdateUserTask) -> Result<Record, GatewayError> {
    let mut task = UserTaskRecord {
        action: request.action.clone().unwrap_or_default(),
        ..UserTaskRecord::default()
    };
    let mut changed = Vec::new();
    if let Some(users) = &request.candidate_users {
        task.candidate_users_list = users.clone();
        changed.push("candidateUsersList");
    }
    if let Some(groups) = &request.candidate_groups {
        task.candidate_groups_list = groups.clone();
        changed.push("candidateGroupsList");
    }
    if let Some(due) = &request.due_date {
        task.due_date = due.clone();
        changed.push("dueDate");
    }
    if let Some(follow_up) = &request.follow_up_date {
        task.follow_up_date = follow_up.clone();
        changed.push("followUpDate");
    }
    if let Some(priority) = request.priority {
        if !(0..=100).contains(&priority) {
            return Err(GatewayError::InvalidArgument(format!(
                "The value for priority is '{priority}' but must be within the [0,100] range"
            )));
        }
        task.priority = priority;
        changed.push("priority");
    }
    if changed.is_empty() && request.action.is_none() {
        return Err(GatewayError::InvalidArgument(
            "At least one of [action, changeset] is required".into(),
        ));
    }
    task.changed_attributes = changed.into_iter().map(String::from).collect();
    Ok(Record::command(
        request.user_task_key,
        UserTaskIntent::Update,
        task,
    ))
}

pub async fn run(d: &Dispatcher, request: UpdateUserTask) -> Result<(), GatewayError> {
    d.require(UserTaskIntent::Update, "updating user tasks")?;
    let command = command(&request)?;
    let event = execute_on_key(d, "userTaskKey", request.user_task_key, command).await?;
    value_of::<UserTaskRecord>(&event)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changeset_names_the_changed_attributes() {
        let record = command(&UpdateUserTask {
            user_task_key: 3,
            candidate_groups: Some(vec!["ops".into()]),
            priority: Some(70),
            due_date: Some(String::new()),
            ..UpdateUserTask::default()
        })
        .unwrap();
        let task = record.value_as::<UserTaskRecord>().unwrap();
        assert_eq!(
            task.changed_attributes,
            vec!["candidateGroupsList", "dueDate", "priority"]
        );
        assert_eq!(
            (task.candidate_groups_list.clone(), task.priority),
            (vec!["ops".to_string()], 70)
        );
        assert!(command(&UpdateUserTask::default()).is_err());
        let out_of_range = command(&UpdateUserTask {
            priority: Some(101),
            ..UpdateUserTask::default()
        });
        assert!(matches!(
            out_of_range,
            Err(GatewayError::InvalidArgument(_))
        ));
    }
}
