use beeline_protocol::intent::{MessageSubscriptionIntent, ProcessMessageSubscriptionIntent};
use beeline_protocol::value::MessageSubscriptionRecord;
use beeline_protocol::{Record, RejectionType};

use super::confirm;
use crate::error::ProcessingError;
use crate::processing::message_correlation;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `MESSAGE_SUBSCRIPTION DELETE`: closes the subscription and confirms it to the instance's
/// partition (also when it is gone already: the first confirmation may be lost). A message it
/// was correlating is refused.
pub(crate) struct MessageSubscriptionDeleteProcessor;

impl CommandProcessor for MessageSubscriptionDeleteProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<MessageSubscriptionRecord>(command)?.clone();
        match ctx
            .state()
            .message_subscriptions()
            .get(request.element_instance_key, &request.message_name)?
        {
            Some(stored) => {
                let record = stored.record();
                ctx.append_event(stored.key, MessageSubscriptionIntent::Deleted, record.clone())?;
                if stored.correlating {
                    // Its instance left before taking the message: a correlate request
                    // waiting for the answer learns it was refused.
                    message_correlation::answer_pending(ctx, &record, false)?;
                }
            }
            None => ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to delete a message subscription for element with key '{}' and message name '{}', but no such message subscription exists",
                    request.element_instance_key, request.message_name
                ),
            ),
        }
        confirm(ctx, &request, ProcessMessageSubscriptionIntent::Delete)?;
        Ok(())
    }
}
