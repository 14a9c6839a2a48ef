//! Correlate a message: `MESSAGE_CORRELATION CORRELATE` on the partition of the correlation
//! key. Unlike a published message it is not buffered: it reaches what waits for it now (open
//! subscriptions, message start events) or nothing, and the answer names the first process
//! instance it reached (NOT_FOUND when none).

use beeline_protocol::Record;
use beeline_protocol::intent::MessageCorrelationIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::MessageCorrelationRecord;

use super::keyed;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::{routing, tenancy, validate};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CorrelateMessage {
    pub name: String,
    pub correlation_key: String,
    /// A JSON object as text; empty for none.
    pub variables: String,
    pub tenant_id: String,
}

pub(crate) fn command(request: &CorrelateMessage) -> Result<Record, GatewayError> {
    validate::not_empty("name", &request.name)?;
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = tenancy::tenant("CorrelateMessage", &request.tenant_id)?;
    Ok(Record::command(
        NO_KEY,
        MessageCorrelationIntent::Correlate,
        MessageCorrelationRecord {
            name: request.name.clone(),
            correlation_key: request.correlation_key.clone(),
            variables,
            tenant_id,
            message_key: NO_KEY,
            process_instance_key: NO_KEY,
            process_definition_key: NO_KEY,
        },
    ))
}

/// The CORRELATED event's value: the message's key and the instance it reached first.
pub async fn run(
    d: &Dispatcher,
    request: CorrelateMessage,
) -> Result<MessageCorrelationRecord, GatewayError> {
    d.require(MessageCorrelationIntent::Correlate, "correlating messages")?;
    let command = command(&request)?;
    let partition = routing::message_partition(&request.correlation_key, d.partition_count());
    Ok(keyed::<MessageCorrelationRecord>(d.execute(partition, command).await?)?.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_correlate_command() {
        let record = command(&CorrelateMessage {
            name: "paid".into(),
            correlation_key: "order-1".into(),
            variables: r#"{"amount":5}"#.into(),
            tenant_id: String::new(),
        })
        .unwrap();
        assert_eq!(record.intent, MessageCorrelationIntent::Correlate.into());
        let correlation = record.value_as::<MessageCorrelationRecord>().unwrap();
        assert_eq!(correlation.name, "paid");
        assert_eq!(correlation.correlation_key, "order-1");
        assert_eq!(correlation.variables, br#"{"amount":5}"#);
        assert_eq!(correlation.tenant_id, "<default>");
        assert_eq!(correlation.process_instance_key, NO_KEY);
        let unnamed = command(&CorrelateMessage::default()).unwrap_err();
        assert_eq!(unnamed.to_string(), "No name provided");
    }
}
