use beeline_protocol::intent::MessageIntent;
use beeline_protocol::value::MessageRecord;
use beeline_protocol::{Record, RejectionType, tenant_or_default};

use super::correlate;
use crate::error::ProcessingError;
use crate::processing::bpmn::behavior::variables::check_document;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `MESSAGE PUBLISH`: buffers the message for its time to live and correlates it to what
/// waits for it. A message id must be unique
/// among the buffered messages with the same name and correlation key.
pub(crate) struct MessagePublishProcessor;

impl CommandProcessor for MessagePublishProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let message = value_of::<MessageRecord>(command)?;
        let tenant = tenant_or_default(&message.tenant_id);
        if !message.message_id.is_empty()
            && ctx.state().messages().exists_with_id(
                tenant,
                &message.name,
                &message.correlation_key,
                &message.message_id,
            )?
        {
            ctx.reject(
                command,
                RejectionType::AlreadyExists,
                format!(
                    "Expected to publish a new message with id '{}', but a message with that id was already published",
                    message.message_id
                ),
            );
            return Ok(());
        }
        // Read (in canonical text) when the message correlates: only checked here.
        if let Err(reason) = check_document(&message.variables) {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!("Expected to publish a message with variables, but {reason}"),
            );
            return Ok(());
        }
        let key = ctx.next_key()?;
        let mut published = message.clone();
        published.tenant_id = tenant.to_owned();
        published.deadline = ctx.now().saturating_add(message.time_to_live.max(0));
        let event = ctx.append_event(key, MessageIntent::Published, published.clone())?;
        ctx.respond(event);
        correlate::correlate_published(ctx, key, &published)?;
        if published.time_to_live <= 0 {
            // Nothing waits for it: it expires at once, without a round trip through the
            // scheduler (as in Zeebe).
            ctx.append_event(key, MessageIntent::Expired, published)?;
        }
        Ok(())
    }
}
