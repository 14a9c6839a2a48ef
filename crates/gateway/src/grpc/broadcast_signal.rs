//! `BroadcastSignal`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::broadcast_signal::{self, BroadcastSignal};
use crate::proto::{BroadcastSignalRequest, BroadcastSignalResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: BroadcastSignalRequest,
) -> Result<BroadcastSignalResponse, GatewayError> {
    let signal = broadcast_signal::run(
        d,
        BroadcastSignal {
            signal_name: r.signal_name,
            variables: r.variables,
            tenant_id: r.tenant_id,
        },
    )
    .await?;
    Ok(BroadcastSignalResponse {
        key: signal.key,
        tenant_id: signal.value.tenant_id,
    })
}
