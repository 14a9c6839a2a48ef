//! `POST /v2/resources/{resourceKey}/deletion`: deletes a process definition, a decision
//! requirements graph or a form; 200 with the key.

use axum::extract::{Path, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::json::{self, Key, to_vec};
use super::{Call, Gateway, Reply, answer};
use crate::error::GatewayError;
use crate::operations::delete_resource::{self, DeleteResource};

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct DeletionRequest {
    #[serde(deserialize_with = "json::optional_integer")]
    operation_reference: Option<u64>,
    delete_history: Option<bool>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeletionResponse {
    resource_key: Key,
}

pub(super) async fn delete(
    State(d): State<Gateway>,
    Path(key): Path<String>,
    call: Call,
) -> Response {
    answer(&d, "DeleteResource", &call.path, async {
        let resource_key = json::path_key("resourceKey", &key)?;
        let body: DeletionRequest = json::body(&call.body)?;
        if body.delete_history == Some(true) {
            return Err(GatewayError::Unimplemented(
                "Beeline does not support deleteHistory (deleting a resource's history from \
                 secondary storage) yet; delete the resource without it"
                    .into(),
            )
            .into());
        }
        delete_resource::run(
            &d,
            DeleteResource {
                resource_key,
                operation_reference: body.operation_reference,
            },
        )
        .await?;
        Ok(Reply::Json(to_vec(&DeletionResponse {
            resource_key: Key(resource_key),
        })))
    })
    .await
}
