//! `POST /v2/messages/publication` and `POST /v2/messages/correlation`.

use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::json::{self, Key, document, to_vec};
use super::{Call, Gateway, Reply, answer};
use crate::operations::correlate_message::{self, CorrelateMessage};
use crate::operations::publish_message::{self, PublishMessage};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PublicationRequest {
    name: String,
    #[serde(default)]
    correlation_key: Option<String>,
    #[serde(default, deserialize_with = "json::optional_integer")]
    time_to_live: Option<i64>,
    #[serde(default)]
    message_id: Option<String>,
    #[serde(default)]
    variables: Option<Box<RawValue>>,
    #[serde(default)]
    tenant_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PublicationResponse {
    tenant_id: String,
    message_key: Key,
}

pub(super) async fn publish(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "PublishMessage", &call.path, async {
        let body: PublicationRequest = json::body(&call.body)?;
        let published = publish_message::run(
            &d,
            PublishMessage {
                name: body.name,
                correlation_key: body.correlation_key.unwrap_or_default(),
                time_to_live: body.time_to_live.unwrap_or(0),
                message_id: body.message_id.unwrap_or_default(),
                variables: document(body.variables),
                tenant_id: body.tenant_id.unwrap_or_default(),
            },
        )
        .await?;
        Ok(Reply::Json(to_vec(&PublicationResponse {
            tenant_id: published.value.tenant_id,
            message_key: Key(published.key),
        })))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CorrelationRequest {
    name: String,
    #[serde(default)]
    correlation_key: Option<String>,
    #[serde(default)]
    variables: Option<Box<RawValue>>,
    #[serde(default)]
    tenant_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CorrelationResponse {
    tenant_id: String,
    message_key: Key,
    process_instance_key: Key,
}

pub(super) async fn correlate(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "CorrelateMessage", &call.path, async {
        let body: CorrelationRequest = json::body(&call.body)?;
        let correlated = correlate_message::run(
            &d,
            CorrelateMessage {
                name: body.name,
                correlation_key: body.correlation_key.unwrap_or_default(),
                variables: document(body.variables),
                tenant_id: body.tenant_id.unwrap_or_default(),
            },
        )
        .await?;
        Ok(Reply::Json(to_vec(&CorrelationResponse {
            tenant_id: correlated.tenant_id,
            message_key: Key(correlated.message_key),
            process_instance_key: Key(correlated.process_instance_key),
        })))
    })
    .await
}
