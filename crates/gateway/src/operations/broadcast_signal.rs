//! Broadcast a signal: `SIGNAL BROADCAST` on the next partition in turn, which distributes it to
//! every other partition.

use beeline_protocol::Record;
use beeline_protocol::intent::SignalIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::SignalRecord;

use super::{Keyed, keyed};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::routing::RoundRobin;
use crate::tenancy;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct BroadcastSignal {
    pub signal_name: String,
    /// A JSON object as text; empty for none.
    pub variables: String,
    pub tenant_id: String,
}

pub(crate) fn command(request: &BroadcastSignal) -> Result<Record, GatewayError> {
    validate::not_empty("signalName", &request.signal_name)?;
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = tenancy::tenant("BroadcastSignal", &request.tenant_id)?;
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

/// The signal's key and the BROADCASTED event's value.
pub async fn run(
    d: &Dispatcher,
    request: BroadcastSignal,
) -> Result<Keyed<SignalRecord>, GatewayError> {
    static ORDER: RoundRobin = RoundRobin::new();
    d.require(SignalIntent::Broadcast, "broadcasting signals")?;
    let command = command(&request)?;
    let event = d
        .execute_anywhere(&ORDER, command, d.config.request_timeout)
        .await?;
    keyed(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_broadcast_command() {
        let record = command(&BroadcastSignal {
            signal_name: "alarm".into(),
            variables: r#"{"level":3}"#.into(),
            tenant_id: String::new(),
        })
        .unwrap();
        assert_eq!(record.intent, SignalIntent::Broadcast.into());
        let signal = record.value_as::<SignalRecord>().unwrap();
        assert_eq!(signal.signal_name, "alarm");
        assert_eq!(signal.variables, br#"{"level":3}"#);
        assert_eq!(signal.tenant_id, "<default>");
        let unnamed = command(&BroadcastSignal::default()).unwrap_err();
        assert_eq!(unnamed.to_string(), "No signalName provided");
    }
}
