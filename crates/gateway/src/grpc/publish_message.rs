//! `PublishMessage`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::publish_message::{self, PublishMessage};
use crate::proto::{PublishMessageRequest, PublishMessageResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: PublishMessageRequest,
) -> Result<PublishMessageResponse, GatewayError> {
    let published = publish_message::run(
        d,
        PublishMessage {
            name: r.name,
            correlation_key: r.correlation_key,
            time_to_live: r.time_to_live,
            message_id: r.message_id,
            variables: r.variables,
            tenant_id: r.tenant_id,
        },
    )
    .await?;
    Ok(PublishMessageResponse {
        key: published.key,
        tenant_id: published.value.tenant_id,
    })
}
