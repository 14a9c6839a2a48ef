//! Complete a Camunda user task: `USER_TASK COMPLETE` on the partition of its key, with the
//! variables the task completes with.

use beeline_protocol::Record;
use beeline_protocol::intent::UserTaskIntent;
use beeline_protocol::value::UserTaskRecord;

use super::{execute_on_key, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompleteUserTask {
    pub user_task_key: i64,
    /// A JSON object as text; empty for none.
    pub variables: String,
    /// What the user did, for the record (`complete` when none).
    pub action: Option<String>,
}

pub(crate) fn command(request: &CompleteUserTask) -> Result<Record, GatewayError> {
    let variables = validate::variables("variables", &request.variables)?;
    Ok(Record::command(
        request.user_task_key,
        UserTaskIntent::Complete,
        UserTaskRecord {
            variables,
            action: request.action.clone().unwrap_or_default(),
            ..UserTaskRecord::default()
        },
    ))
}

pub async fn run(d: &Dispatcher, request: CompleteUserTask) -> Result<(), GatewayError> {
    d.require(UserTaskIntent::Complete, "completing user tasks")?;
    let command = command(&request)?;
    let event = execute_on_key(d, "userTaskKey", request.user_task_key, command).await?;
    value_of::<UserTaskRecord>(&event)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_complete_command() {
        let record = command(&CompleteUserTask {
            user_task_key: 7,
            variables: r#"{"ok":true}"#.into(),
            action: Some("approve".into()),
        })
        .unwrap();
        assert_eq!(record.key, 7);
        assert_eq!(record.intent, UserTaskIntent::Complete.into());
        let task = record.value_as::<UserTaskRecord>().unwrap();
        assert_eq!(
            (task.variables.as_slice(), task.action.as_str()),
            (&br#"{"ok":true}"#[..], "approve")
        );
        let bad = command(&CompleteUserTask {
            user_task_key: 7,
            variables: "[1]".into(),
            action: None,
        });
        assert!(matches!(bad, Err(GatewayError::InvalidArgument(_))));
    }
}
