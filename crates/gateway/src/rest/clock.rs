//! `PUT /v2/clock` (pin the engine's clock at a timestamp) and `POST /v2/clock/reset`.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::json;
use super::{Call, Gateway, Reply, answer};
use crate::operations::pin_clock::{self, ClockChange};

#[derive(Debug, Deserialize)]
struct PinRequest {
    /// Milliseconds since the epoch.
    #[serde(deserialize_with = "json::integer")]
    timestamp: i64,
}

pub(super) async fn pin(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "PinClock", &call.path, async {
        let body: PinRequest = json::body(&call.body)?;
        pin_clock::run(&d, ClockChange::Pin(body.timestamp)).await?;
        Ok(Reply::NoContent)
    })
    .await
}

pub(super) async fn reset(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "ResetClock", &call.path, async {
        pin_clock::run(&d, ClockChange::Reset).await?;
        Ok(Reply::NoContent)
    })
    .await
}
