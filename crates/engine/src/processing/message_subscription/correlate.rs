use beeline_protocol::intent::MessageSubscriptionIntent;
use beeline_protocol::value::MessageSubscriptionRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::message::correlate;
use crate::processing::message_correlation;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `MESSAGE_SUBSCRIPTION CORRELATE`: the instance took the message (a correlate request
/// waiting for it learns so). A subscription that stays open (non-interrupting) takes the next
/// buffered message.
pub(crate) struct MessageSubscriptionCorrelateProcessor;

impl CommandProcessor for MessageSubscriptionCorrelateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<MessageSubscriptionRecord>(command)?.clone();
        let Some(stored) = ctx
            .state()
            .message_subscriptions()
            .get(request.element_instance_key, &request.message_name)?
        else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to correlate subscription for element with key '{}' and message name '{}', but no such message subscription exists",
                    request.element_instance_key, request.message_name
                ),
            );
            return Ok(());
        };
        let record = stored.record();
        if !stored.correlating || record.message_key != request.message_key {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to correlate message with key '{}' to the subscription for element with key '{}', but it is not correlating that message",
                    request.message_key, request.element_instance_key
                ),
            );
            return Ok(());
        }
        ctx.append_event(
            stored.key,
            MessageSubscriptionIntent::Correlated,
            record.clone(),
        )?;
        message_correlation::answer_pending(ctx, &record, true)?;
        if !record.interrupting
            && let Some(open) = ctx
                .state()
                .message_subscriptions()
                .get(record.element_instance_key, &record.message_name)?
        {
            correlate::correlate_next_message(ctx, &open)?;
        }
        Ok(())
    }
}
