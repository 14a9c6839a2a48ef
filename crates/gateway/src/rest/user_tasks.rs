//! `POST /v2/user-tasks/{userTaskKey}/completion`, `POST .../assignment`,
//! `DELETE .../assignee` and `PATCH /v2/user-tasks/{userTaskKey}`: what people do with Camunda
//! user tasks. Searching and reading them is the read side's, which Beeline does not have yet.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::json::{self, document};
use super::{Call, Gateway, PathParam, Reply, answer};
use crate::operations::assign_user_task::{self, AssignUserTask};
use crate::operations::complete_user_task::{self, CompleteUserTask};
use crate::operations::update_user_task::{self, UpdateUserTask};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CompletionRequest {
    #[serde(default)]
    variables: Option<Box<RawValue>>,
    #[serde(default)]
    action: Option<String>,
}

pub(super) async fn complete(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "CompleteUserTask", &call.path, async {
        let user_task_key = json::path_key("userTaskKey", &key)?;
        let body: CompletionRequest = json::body(&call.body)?;
        complete_user_task::run(
            &d,
            CompleteUserTask {
                user_task_key,
                variables: document(body.variables),
                action: body.action,
            },
        )
        .await?;
        Ok(Reply::NoContent)
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AssignmentRequest {
    assignee: String,
    #[serde(default)]
    allow_override: Option<bool>,
    #[serde(default)]
    action: Option<String>,
}

pub(super) async fn assign(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "AssignUserTask", &call.path, async {
        let user_task_key = json::path_key("userTaskKey", &key)?;
        let body: AssignmentRequest = json::body(&call.body)?;
        assign_user_task::run(
            &d,
            AssignUserTask {
                user_task_key,
                assignee: assign_user_task::assignee(&body.assignee)?,
                allow_override: body.allow_override.unwrap_or(true),
                action: body.action,
            },
        )
        .await?;
        Ok(Reply::NoContent)
    })
    .await
}

pub(super) async fn unassign(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "UnassignUserTask", &call.path, async {
        let user_task_key = json::path_key("userTaskKey", &key)?;
        assign_user_task::run(
            &d,
            AssignUserTask {
                user_task_key,
                assignee: String::new(),
                allow_override: true,
                action: None,
            },
        )
        .await?;
        Ok(Reply::NoContent)
    })
    .await
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateRequest {
    #[serde(default)]
    changeset: Option<Changeset>,
    #[serde(default)]
    action: Option<String>,
}

/// The attributes to change: one present (even empty) is changed, one absent kept.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Changeset {
    due_date: Option<String>,
    follow_up_date: Option<String>,
    candidate_users: Option<Vec<String>>,
    candidate_groups: Option<Vec<String>>,
    #[serde(deserialize_with = "json::optional_integer")]
    priority: Option<i32>,
}

pub(super) async fn update(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "UpdateUserTask", &call.path, async {
        let user_task_key = json::path_key("userTaskKey", &key)?;
        let body: UpdateRequest = json::body(&call.body)?;
        let changeset = body.changeset.unwrap_or_default();
        update_user_task::run(
            &d,
            UpdateUserTask {
                user_task_key,
                due_date: changeset.due_date,
                follow_up_date: changeset.follow_up_date,
                candidate_users: changeset.candidate_users,
                candidate_groups: changeset.candidate_groups,
                priority: changeset.priority,
                action: body.action,
            },
        )
        .await?;
        Ok(Reply::NoContent)
    })
    .await
}
