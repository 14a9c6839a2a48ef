//! `POST /v2/signals/broadcast`.

use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::json::{self, Key, document, to_vec};
use super::{Call, Gateway, Reply, answer};
use crate::operations::broadcast_signal::{self, BroadcastSignal};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BroadcastRequest {
    signal_name: String,
    #[serde(default)]
    variables: Option<Box<RawValue>>,
    #[serde(default)]
    tenant_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BroadcastResponse {
    tenant_id: String,
    signal_key: Key,
}

pub(super) async fn broadcast(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "BroadcastSignal", &call.path, async {
        let body: BroadcastRequest = json::body(&call.body)?;
        let signal = broadcast_signal::run(
            &d,
            BroadcastSignal {
                signal_name: body.signal_name,
                variables: document(body.variables),
                tenant_id: body.tenant_id.unwrap_or_default(),
            },
        )
        .await?;
        Ok(Reply::Json(to_vec(&BroadcastResponse {
            tenant_id: signal.value.tenant_id,
            signal_key: Key(signal.key),
        })))
    })
    .await
}
