//! `BroadcastSignal` → `SIGNAL BROADCAST` on any partition (round-robin), which distributes it.
//!
//! Not available yet: the protocol crate has no `SignalRecord` value, so there is no command to
//! send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::SignalIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{BroadcastSignalRequest, BroadcastSignalResponse};
use crate::validate;

pub(crate) fn check(request: &BroadcastSignalRequest) -> Result<(), GatewayError> {
    validate::not_empty("signalName", &request.signal_name)?;
    validate::variables("variables", &request.variables)?;
    validate::tenant("BroadcastSignal", &request.tenant_id)?;
    Ok(())
}

pub(crate) async fn handle(
    _d: &Dispatcher,
    request: BroadcastSignalRequest,
) -> Result<BroadcastSignalResponse, GatewayError> {
    check(&request)?;
    Err(GatewayError::not_built(
        "broadcasting signals",
        "SIGNAL",
        SignalIntent::Broadcast.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_needs_a_name() {
        let request = BroadcastSignalRequest {
            signal_name: String::new(),
            variables: String::new(),
            tenant_id: String::new(),
        };
        assert_eq!(
            check(&request).unwrap_err().to_string(),
            "No signalName provided"
        );
        assert!(
            check(&BroadcastSignalRequest {
                signal_name: "go".into(),
                ..request
            })
            .is_ok()
        );
    }
}
