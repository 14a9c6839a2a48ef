//! `POST /v2/process-instances` (by process id and version or by key; `awaitCompletion` waits
//! for the result, 504 past `requestTimeout`),
//! `POST /v2/process-instances/{processInstanceKey}/cancellation` and
//! `POST /v2/process-instances/{processInstanceKey}/modification`.

use std::time::Duration;

use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::json::{self, Key, document, raw, to_vec};
use super::problem::Problem;
use super::{Call, Gateway, PathParam, Reply, answer, keyed_command};
use crate::error::GatewayError;
use crate::operations::cancel_process_instance::{self, CancelProcessInstance};
use crate::operations::create_process_instance::{
    self, AwaitResult, CreateProcessInstance, ProcessSelector,
};
use crate::operations::modify_process_instance::{
    self, ActivateInstruction, ModifyProcessInstance, VariableInstruction,
};

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct CreateRequest {
    process_definition_id: Option<String>,
    #[serde(deserialize_with = "json::optional_integer")]
    process_definition_version: Option<i32>,
    process_definition_key: Option<Key>,
    variables: Option<Box<RawValue>>,
    tenant_id: Option<String>,
    #[serde(deserialize_with = "json::optional_integer")]
    operation_reference: Option<u64>,
    start_instructions: Option<Vec<StartInstruction>>,
    runtime_instructions: Option<Vec<RuntimeInstruction>>,
    await_completion: Option<bool>,
    fetch_variables: Option<Vec<String>>,
    #[serde(deserialize_with = "json::optional_integer")]
    request_timeout: Option<i64>,
    tags: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartInstruction {
    element_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuntimeInstruction {
    after_element_id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreateResponse {
    process_definition_id: String,
    process_definition_version: i32,
    tenant_id: String,
    variables: Box<RawValue>,
    process_definition_key: Key,
    process_instance_key: Key,
    tags: Vec<String>,
}

fn request(body: CreateRequest) -> Result<(CreateProcessInstance, Option<AwaitResult>), Problem> {
    let process = match (body.process_definition_id, body.process_definition_key) {
        (Some(process_id), None) => ProcessSelector::Id {
            process_id,
            version: body.process_definition_version.unwrap_or(-1),
        },
        (None, Some(Key(key))) => ProcessSelector::Key(key),
        (Some(_), Some(_)) => {
            return Err(Problem::invalid(
                "Only one of [processDefinitionId, processDefinitionKey] is allowed",
            ));
        }
        (None, None) => {
            return Err(Problem::invalid(
                "At least one of [processDefinitionId, processDefinitionKey] is required",
            ));
        }
    };
    let wait = body.await_completion.unwrap_or(false).then(|| AwaitResult {
        fetch_variables: body.fetch_variables.unwrap_or_default(),
        timeout: body
            .request_timeout
            .and_then(|ms| u64::try_from(ms).ok())
            .map(Duration::from_millis),
    });
    let create = CreateProcessInstance {
        process,
        variables: document(body.variables),
        start_instructions: body
            .start_instructions
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.element_id)
            .collect(),
        runtime_instructions: body
            .runtime_instructions
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.after_element_id)
            .collect(),
        tenant_id: body.tenant_id.unwrap_or_default(),
        tags: body.tags.unwrap_or_default(),
        operation_reference: body.operation_reference,
    };
    Ok((create, wait))
}

pub(super) async fn create(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "CreateProcessInstance", &call.path, async {
        let (create, wait) = request(json::body(&call.body)?)?;
        let response = match wait {
            None => {
                let created = create_process_instance::run(&d, create).await?.value;
                CreateResponse {
                    process_definition_id: created.bpmn_process_id,
                    process_definition_version: created.version,
                    tenant_id: created.tenant_id,
                    variables: json::empty_object(),
                    process_definition_key: Key(created.process_definition_key),
                    process_instance_key: Key(created.process_instance_key),
                    tags: created.tags,
                }
            }
            Some(wait) => {
                let result = create_process_instance::run_awaiting(&d, create, wait).await?;
                CreateResponse {
                    process_definition_id: result.bpmn_process_id,
                    process_definition_version: result.version,
                    tenant_id: result.tenant_id,
                    variables: raw(result.variables),
                    process_definition_key: Key(result.process_definition_key),
                    process_instance_key: Key(result.process_instance_key),
                    tags: result.tags,
                }
            }
        };
        Ok(Reply::Json(to_vec(&response)))
    })
    .await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct OperationReference {
    #[serde(deserialize_with = "json::optional_integer")]
    pub operation_reference: Option<u64>,
}

pub(super) async fn cancel(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    keyed_command(
        &d,
        "CancelProcessInstance",
        "processInstanceKey",
        &key,
        &call,
        |process_instance_key, body: OperationReference| {
            cancel_process_instance::run(
                &d,
                CancelProcessInstance {
                    process_instance_key,
                    operation_reference: body.operation_reference,
                },
            )
        },
    )
    .await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ModificationRequest {
    #[serde(deserialize_with = "json::optional_integer")]
    operation_reference: Option<u64>,
    activate_instructions: Vec<ActivateRequest>,
    terminate_instructions: Vec<TerminateRequest>,
    move_instructions: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ActivateRequest {
    element_id: String,
    #[serde(default)]
    ancestor_element_instance_key: Option<Key>,
    #[serde(default)]
    variable_instructions: Vec<VariableRequest>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VariableRequest {
    variables: Option<Box<RawValue>>,
    #[serde(default)]
    scope_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TerminateRequest {
    element_instance_key: Key,
}

pub(super) async fn modify(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    let gateway = &d;
    keyed_command(
        &d,
        "ModifyProcessInstance",
        "processInstanceKey",
        &key,
        &call,
        |process_instance_key, body: ModificationRequest| async move {
            if body.move_instructions.is_some() {
                return Err(GatewayError::Unimplemented(
                    "Beeline does not support moveInstructions (Camunda 8.9) yet; activate and \
                     terminate the elements instead"
                        .into(),
                ));
            }
            let request = ModifyProcessInstance {
                process_instance_key,
                activate: body
                    .activate_instructions
                    .into_iter()
                    .map(|a| ActivateInstruction {
                        element_id: a.element_id,
                        ancestor_element_instance_key: a
                            .ancestor_element_instance_key
                            .map_or(-1, |Key(key)| key),
                        variables: a
                            .variable_instructions
                            .into_iter()
                            .map(|v| VariableInstruction {
                                variables: document(v.variables),
                                scope_id: v.scope_id,
                            })
                            .collect(),
                    })
                    .collect(),
                terminate: body
                    .terminate_instructions
                    .into_iter()
                    .map(|t| t.element_instance_key.0)
                    .collect(),
                operation_reference: body.operation_reference,
            };
            modify_process_instance::run(gateway, request).await
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(CreateProcessInstance, Option<AwaitResult>), Problem> {
        request(json::body(text.as_bytes())?)
    }

    #[test]
    fn by_id_with_the_latest_version_by_default() {
        let (create, wait) =
            parse(r#"{"processDefinitionId":"order","variables":{"a":1},"tags":["x"]}"#).unwrap();
        assert_eq!(
            create.process,
            ProcessSelector::Id {
                process_id: "order".into(),
                version: -1
            }
        );
        assert_eq!(create.variables, r#"{"a":1}"#);
        assert_eq!(create.tags, vec!["x"]);
        assert!(wait.is_none());
    }

    #[test]
    fn by_key_awaiting_the_result() {
        let (create, wait) = parse(
            r#"{"processDefinitionKey":"2251799813685249","awaitCompletion":true,
                "fetchVariables":["total"],"requestTimeout":2500,
                "startInstructions":[{"elementId":"pay"}],"operationReference":7}"#,
        )
        .unwrap();
        assert_eq!(create.process, ProcessSelector::Key(2_251_799_813_685_249));
        assert_eq!(create.start_instructions, vec!["pay"]);
        assert_eq!(create.operation_reference, Some(7));
        let wait = wait.unwrap();
        assert_eq!(wait.fetch_variables, vec!["total"]);
        assert_eq!(wait.timeout, Some(Duration::from_millis(2500)));
    }

    #[test]
    fn exactly_one_of_id_and_key() {
        assert_eq!(
            parse("{}").unwrap_err().detail,
            "At least one of [processDefinitionId, processDefinitionKey] is required"
        );
        assert_eq!(
            parse(r#"{"processDefinitionId":"a","processDefinitionKey":"1"}"#)
                .unwrap_err()
                .detail,
            "Only one of [processDefinitionId, processDefinitionKey] is allowed"
        );
    }
}
