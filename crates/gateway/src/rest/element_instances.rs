//! `PUT /v2/element-instances/{elementInstanceKey}/variables`.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::json::{self, document};
use super::{Call, Gateway, PathParam, keyed_command};
use crate::error::GatewayError;
use crate::operations::set_variables::{self, SetVariables};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetVariablesRequest {
    variables: Option<Box<RawValue>>,
    #[serde(default)]
    local: Option<bool>,
    #[serde(default, deserialize_with = "json::optional_integer")]
    operation_reference: Option<u64>,
}

pub(super) async fn set_variables(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    let d = &d;
    keyed_command(
        d,
        "SetVariables",
        "elementInstanceKey",
        &key,
        &call,
        |element_instance_key, body: SetVariablesRequest| async move {
            let variables = document(body.variables);
            if variables.is_empty() {
                return Err(GatewayError::InvalidArgument(
                    "No variables provided".into(),
                ));
            }
            set_variables::run(
                d,
                SetVariables {
                    element_instance_key,
                    variables,
                    local: body.local.unwrap_or(false),
                    operation_reference: body.operation_reference,
                },
            )
            .await
            .map(drop)
        },
    )
    .await
}
