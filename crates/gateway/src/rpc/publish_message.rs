//! `PublishMessage` → `MESSAGE PUBLISH` on the partition of the correlation key.

use beeline_protocol::Record;
use beeline_protocol::intent::MessageIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::MessageRecord;

use super::value_of;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{PublishMessageRequest, PublishMessageResponse};
use crate::{routing, validate};

pub(crate) fn command(request: &PublishMessageRequest) -> Result<Record, GatewayError> {
    validate::not_empty("name", &request.name)?;
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = validate::tenant("PublishMessage", &request.tenant_id)?;
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

pub(crate) fn response(event: &Record) -> Result<PublishMessageResponse, GatewayError> {
    let message = value_of::<MessageRecord>(event)?;
    Ok(PublishMessageResponse {
        key: event.key,
        tenant_id: message.tenant_id.clone(),
    })
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: PublishMessageRequest,
) -> Result<PublishMessageResponse, GatewayError> {
    d.require(MessageIntent::Publish, "publishing messages")?;
    let command = command(&request)?;
    let partition = routing::message_partition(&request.correlation_key, d.partition_count());
    let event = d.execute(partition, command).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::RecordType;

    fn request() -> PublishMessageRequest {
        PublishMessageRequest {
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
        assert_eq!(message.variables, br#"{"amount":5}"#, "in canonical text");
        assert_eq!(message.tenant_id, "<default>");
    }

    #[test]
    fn invalid_requests_name_the_field() {
        let empty_name = command(&PublishMessageRequest {
            name: String::new(),
            ..request()
        })
        .unwrap_err();
        assert_eq!(empty_name.to_string(), "No name provided");
        let array = command(&PublishMessageRequest {
            variables: "[]".into(),
            ..request()
        })
        .unwrap_err();
        assert!(array.to_string().contains("'variables'"));
        let tenant = command(&PublishMessageRequest {
            tenant_id: "acme".into(),
            ..request()
        })
        .unwrap_err();
        assert!(tenant.to_string().contains("'acme'"));
    }

    #[test]
    fn event_becomes_the_response() {
        let command = command(&request()).unwrap();
        let mut event = Record::event(
            42,
            MessageIntent::Published,
            command.value_as::<MessageRecord>().unwrap().clone(),
        );
        event.key = 2_251_799_813_685_249;
        let response = response(&event).unwrap();
        assert_eq!(response.key, 2_251_799_813_685_249);
        assert_eq!(response.tenant_id, "<default>");
    }
}
