//! `PUT /v2/element-instances/{elementInstanceKey}/variables`.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::json::{self, document};
use super::problem::Problem;
use super::{Call, Gateway, PathParam, Reply, answer};
use crate::operations::set_variables::{self, SetVariables};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetVariablesRequest {
    variables: Option<Box<RawValue>>,
    #[serde(default)]
    local: Option<bool>,
    #[serde(default)]
    operation_reference: Option<u64>,
}

pub(super) async fn set_variables(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "SetVariables", &call.path, async {
        let element_instance_key = json::path_key("elementInstanceKey", &key)?;
        let body: SetVariablesRequest = json::body(&call.body)?;
        let variables = document(body.variables);
        if variables.is_empty() {
            return Err(Problem::invalid("No variables provided"));
        }
        set_variables::run(
            &d,
            SetVariables {
                element_instance_key,
                variables,
                local: body.local.unwrap_or(false),
                operation_reference: body.operation_reference,
            },
        )
        .await?;
        Ok(Reply::NoContent)
    })
    .await
}
