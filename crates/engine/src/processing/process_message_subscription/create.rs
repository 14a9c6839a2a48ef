use beeline_protocol::intent::ProcessMessageSubscriptionIntent;
use beeline_protocol::value::ProcessMessageSubscriptionRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::SubscriptionLifecycle;

/// `PROCESS_MESSAGE_SUBSCRIPTION CREATE`: the message's partition opened the subscription.
pub(crate) struct ProcessMessageSubscriptionCreateProcessor;

impl CommandProcessor for ProcessMessageSubscriptionCreateProcessor {
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
            Some(stored) if stored.lifecycle()? == SubscriptionLifecycle::Creating => {
                ctx.append_event(
                    stored.key,
                    ProcessMessageSubscriptionIntent::Created,
                    stored.record(),
                )?;
            }
            Some(_) => ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to create process message subscription with element key '{}' and message name '{}', but it is already opened or closing",
                    request.element_instance_key, request.message_name
                ),
            ),
            None => ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to create process message subscription with element key '{}' and message name '{}', but no such subscription was found",
                    request.element_instance_key, request.message_name
                ),
            ),
        }
        Ok(())
    }
}
