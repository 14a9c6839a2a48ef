use beeline_protocol::Record;
use beeline_protocol::intent::MessageSubscriptionIntent;
use beeline_protocol::value::MessageSubscriptionRecord;

use crate::error::ProcessingError;
use crate::processing::message::correlate;
use crate::processing::message_correlation;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `MESSAGE_SUBSCRIPTION REJECT`: the instance could not take the message (it left, or is
/// being interrupted); the message goes to another waiting instance of the process (a
/// correlated message is not buffered: its request learns that nothing took it).
pub(crate) struct MessageSubscriptionRejectProcessor;

impl CommandProcessor for MessageSubscriptionRejectProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<MessageSubscriptionRecord>(command)?.clone();
        let key = ctx
            .state()
            .message_subscriptions()
            .get(request.element_instance_key, &request.message_name)?
            .map_or(-1, |stored| stored.key);
        ctx.append_event(key, MessageSubscriptionIntent::Rejected, request.clone())?;
        message_correlation::answer_pending(ctx, &request, false)?;
        correlate::correlate_elsewhere(
            ctx,
            request.message_key,
            &request.bpmn_process_id,
            request.element_instance_key,
        )
    }
}
