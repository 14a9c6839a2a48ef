use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `MESSAGE EXPIRE`: written by the scheduler when a message's time to live is over.
pub(crate) struct MessageExpireProcessor;

impl CommandProcessor for MessageExpireProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        value_of::<MessageRecord>(command)?;
        let Some(message) = ctx.state().messages().get(command.key)? else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to expire message with key '{}', but no such message was found",
                    command.key
                ),
            );
            return Ok(());
        };
        ctx.append_event(command.key, MessageIntent::Expired, message)?;
        Ok(())
    }
}
