use beeline_protocol::intent::{MessageSubscriptionIntent, ProcessMessageSubscriptionIntent};
use beeline_protocol::value::MessageSubscriptionRecord;
use beeline_protocol::{Record, RejectionType};

use super::confirm;
use crate::error::ProcessingError;
use crate::processing::message::correlate;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `MESSAGE_SUBSCRIPTION CREATE`: opens the subscription, confirms it to the instance's
/// partition, and correlates the oldest buffered message that fits. A repeated request is
/// refused but confirmed again (the first confirmation may be lost).
pub(crate) struct MessageSubscriptionCreateProcessor;

impl CommandProcessor for MessageSubscriptionCreateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let record = value_of::<MessageSubscriptionRecord>(command)?.clone();
        if ctx
            .state()
            .message_subscriptions()
            .get(record.element_instance_key, &record.message_name)?
            .is_some()
        {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to open a new message subscription for element with key '{}' and message name '{}', but there is already a message subscription for that element key and message name opened",
                    record.element_instance_key, record.message_name
                ),
            );
            confirm(ctx, &record, ProcessMessageSubscriptionIntent::Create)?;
            return Ok(());
        }
        let key = ctx.next_key()?;
        ctx.append_event(key, MessageSubscriptionIntent::Created, record.clone())?;
        confirm(ctx, &record, ProcessMessageSubscriptionIntent::Create)?;
        if let Some(stored) = ctx
            .state()
            .message_subscriptions()
            .get(record.element_instance_key, &record.message_name)?
        {
            correlate::correlate_next_message(ctx, &stored)?;
        }
        Ok(())
    }
}
