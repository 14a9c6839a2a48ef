//! `BroadcastSignal` → `SIGNAL BROADCAST` on the next partition in turn, which distributes it
//! to every other partition.

use beeline_protocol::Record;
use beeline_protocol::intent::SignalIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::SignalRecord;

use super::value_of;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{BroadcastSignalRequest, BroadcastSignalResponse};
use crate::routing::RoundRobin;
use crate::validate;

pub(crate) fn command(request: &BroadcastSignalRequest) -> Result<Record, GatewayError> {
    validate::not_empty("signalName", &request.signal_name)?;
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = validate::tenant("BroadcastSignal", &request.tenant_id)?;
    Ok(Record::command(
        NO_KEY,
        SignalIntent::Broadcast,
        SignalRecord {
            signal_name: request.signal_name.clone(),
            variables,
            tenant_id,
        },
    ))
}

pub(crate) fn response(event: &Record) -> Result<BroadcastSignalResponse, GatewayError> {
    let signal = value_of::<SignalRecord>(event)?;
    Ok(BroadcastSignalResponse {
        key: event.key,
        tenant_id: signal.tenant_id.clone(),
    })
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: BroadcastSignalRequest,
) -> Result<BroadcastSignalResponse, GatewayError> {
    static ORDER: RoundRobin = RoundRobin::new();
    d.require(SignalIntent::Broadcast, "broadcasting signals")?;
    let command = command(&request)?;
    let event = d
        .execute_anywhere(&ORDER, command, d.config.request_timeout)
        .await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> BroadcastSignalRequest {
        BroadcastSignalRequest {
            signal_name: "go".into(),
            variables: r#"{"a":1}"#.into(),
            tenant_id: String::new(),
        }
    }

    #[test]
    fn request_becomes_a_broadcast_command() {
        let record = command(&request()).unwrap();
        assert_eq!(record.intent, SignalIntent::Broadcast.into());
        let signal = record.value_as::<SignalRecord>().unwrap();
        assert_eq!(signal.signal_name, "go");
        assert_eq!(signal.variables, br#"{"a":1}"#);
        assert_eq!(signal.tenant_id, "<default>");
        let mut event = Record::event(5, SignalIntent::Broadcasted, signal.clone());
        event.key = 5;
        let response = response(&event).unwrap();
        assert_eq!(response.key, 5);
        assert_eq!(response.tenant_id, "<default>");
    }

    #[test]
    fn a_signal_needs_a_name() {
        let error = command(&BroadcastSignalRequest {
            signal_name: String::new(),
            ..request()
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "No signalName provided");
    }
}
