//! Publish a message: `MESSAGE PUBLISH` on the partition of the correlation key, where it is
//! buffered for its time to live.

use beeline_protocol::Record;
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::MessageRecord;

use super::{Keyed, keyed};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::{routing, tenancy, validate};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishMessage {
    pub name: String,
    pub correlation_key: String,
    /// Milliseconds the message stays buffered for subscriptions opened later.
    pub time_to_live: i64,
    /// Optional; a second message with the same id is refused while the first is buffered.
    pub message_id: String,
    /// A JSON object as text; empty for none.
    pub variables: String,
    pub tenant_id: String,
}

pub(crate) fn command(request: &PublishMessage) -> Result<Record, GatewayError> {
    validate::not_empty("name", &request.name)?;
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = tenancy::tenant("PublishMessage", &request.tenant_id)?;
    Ok(Record::command(
        NO_KEY,
        MessageIntent::Publish,
        MessageRecord {
            name: request.name.clone(),
            correlation_key: request.correlation_key.clone(),
            time_to_live: request.time_to_live,
            message_id: request.message_id.clone(),
            variables,
            deadline: -1,
            tenant_id,
        },
    ))
}

/// The message's key and the PUBLISHED event's value.
pub async fn run(
    d: &Dispatcher,
    request: PublishMessage,
) -> Result<Keyed<MessageRecord>, GatewayError> {
    d.require(MessageIntent::Publish, "publishing messages")?;
    let command = command(&request)?;
    let partition = routing::message_partition(&request.correlation_key, d.partition_count());
    keyed(d.execute(partition, command).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::RecordType;

    fn request() -> PublishMessage {
        PublishMessage {
            name: "paid".into(),
            correlation_key: "order-1".into(),
            time_to_live: 60_000,
            message_id: "m-1".into(),
            variables: r#"{"amount": 5}"#.into(),
            tenant_id: String::new(),
        }
    }

    #[test]
    fn request_becomes_a_publish_command() {
        let record = command(&request()).unwrap();
        assert_eq!(record.record_type, RecordType::Command);
        assert_eq!(record.intent, MessageIntent::Publish.into());
        assert_eq!(record.key, NO_KEY);
        let message = record.value_as::<MessageRecord>().unwrap();
        assert_eq!(message.name, "paid");
        assert_eq!(message.correlation_key, "order-1");
        assert_eq!(message.time_to_live, 60_000);
        assert_eq!(message.message_id, "m-1");
        assert_eq!(message.variables, br#"{"amount": 5}"#);
        assert_eq!(message.tenant_id, "<default>");
    }

    #[test]
    fn invalid_requests_name_the_field() {
        let empty_name = command(&PublishMessage {
            name: String::new(),
            ..request()
        })
        .unwrap_err();
        assert_eq!(empty_name.to_string(), "No name provided");
        let array = command(&PublishMessage {
            variables: "[]".into(),
            ..request()
        })
        .unwrap_err();
        assert!(array.to_string().contains("'variables'"));
        let tenant = command(&PublishMessage {
            tenant_id: "acme".into(),
            ..request()
        })
        .unwrap_err();
        assert!(tenant.to_string().contains("'acme'"));
    }
}
