use beeline_protocol::intent::ProcessMessageSubscriptionIntent;
use beeline_protocol::value::ProcessMessageSubscriptionRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::SubscriptionLifecycle;

/// `PROCESS_MESSAGE_SUBSCRIPTION DELETE`: the message's partition closed the subscription.
pub(crate) struct ProcessMessageSubscriptionDeleteProcessor;

impl CommandProcessor for ProcessMessageSubscriptionDeleteProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<ProcessMessageSubscriptionRecord>(command)?;
        match ctx
            .state()
            .process_message_subscriptions()
            .get(request.element_instance_key, &request.message_name)?
        {
            Some(stored) if stored.lifecycle()? == SubscriptionLifecycle::Deleting => {
                ctx.append_event(
                    stored.key,
                    ProcessMessageSubscriptionIntent::Deleted,
                    stored.record(),
                )?;
            }
            _ => ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to delete process message subscription with element key '{}' and message name '{}', but no such subscription is being closed",
                    request.element_instance_key, request.message_name
                ),
            ),
        }
        Ok(())
    }
}
