use beeline_protocol::intent::{MessageCorrelationIntent, MessageIntent};
use beeline_protocol::value::{MessageCorrelationRecord, MessageRecord, MessageSubscriptionRecord};
use beeline_protocol::{Intent, Record, RecordType, RejectionType, tenant_or_default};

use crate::error::ProcessingError;
use crate::processing::message::correlate;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::transient::CorrelationOutcome;

/// `MESSAGE_CORRELATION CORRELATE`: publishes the message, correlates it to what waits for it
/// now (open subscriptions, one per process, and message start events) and lets it expire at
/// once: it is never buffered. The request is answered `CORRELATED` with the first instance the
/// message reached: a message start event's new instance at once; otherwise the first instance
/// (on its own partition) that takes the message, once it says so. When nothing waits for the
/// message, or every instance it went to refuses it, the request is rejected NOT_FOUND.
pub(crate) struct MessageCorrelationCorrelateProcessor;

impl CommandProcessor for MessageCorrelationCorrelateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<MessageCorrelationRecord>(command)?;
        let key = ctx.next_key()?;
        let message = MessageRecord {
            name: request.name.clone(),
            correlation_key: request.correlation_key.clone(),
            time_to_live: -1,
            message_id: String::new(),
            variables: request.variables.clone(),
            deadline: ctx.now(),
            tenant_id: tenant_or_default(&request.tenant_id).to_owned(),
        };
        ctx.append_event(key, MessageIntent::Published, message.clone())?;
        let reached = correlate::correlate_published(ctx, key, &message)?;
        let mut correlation = MessageCorrelationRecord {
            message_key: key,
            ..request.clone()
        };
        match reached.started {
            Some((instance, definition)) => {
                correlation.process_instance_key = instance;
                correlation.process_definition_key = definition;
                let event =
                    ctx.append_event(key, MessageCorrelationIntent::Correlated, correlation)?;
                ctx.respond(event);
            }
            None if reached.sent > 0 => {
                ctx.state()
                    .transient()
                    .await_correlation(key, command.position, reached.sent);
                ctx.respond_later();
            }
            None => ctx.reject(
                command,
                RejectionType::NotFound,
                not_found(&request.name, &request.correlation_key),
            ),
        }
        ctx.append_event(key, MessageIntent::Expired, message)?;
        Ok(())
    }
}

/// Zeebe's reason when nothing takes a correlated message.
fn not_found(name: &str, correlation_key: &str) -> String {
    format!(
        "Expected to find subscription for message with name '{name}' and correlation key \
         '{correlation_key}', but none was found."
    )
}

/// The instance of `subscription` took (`taken`) or refused the message it was correlating:
/// a correlate request waiting for that message is answered, `CORRELATED` with that instance,
/// or NOT_FOUND once every instance it went to refused it.
pub(crate) fn answer_pending(
    ctx: &mut ProcessingContext<'_, '_>,
    subscription: &MessageSubscriptionRecord,
    taken: bool,
) -> Result<(), ProcessingError> {
    let message_key = subscription.message_key;
    let correlation = || MessageCorrelationRecord {
        name: subscription.message_name.clone(),
        correlation_key: subscription.correlation_key.clone(),
        variables: subscription.variables.clone(),
        tenant_id: subscription.tenant_id.clone(),
        message_key,
        process_instance_key: subscription.process_instance_key,
        process_definition_key: subscription.process_definition_key,
    };
    match ctx
        .state()
        .transient()
        .correlation_answered(message_key, taken)
    {
        CorrelationOutcome::Taken(request) => {
            let event = ctx.append_event(
                message_key,
                MessageCorrelationIntent::Correlated,
                correlation(),
            )?;
            if let Some(answer) = ctx.written(event).cloned() {
                ctx.answer(request, answer);
            }
        }
        CorrelationOutcome::Refused(request) => {
            let reason = format!(
                "{} The instances it was sent to no longer wait for it.",
                not_found(&subscription.message_name, &subscription.correlation_key)
            );
            let mut rejection = Record::new(
                RecordType::CommandRejection,
                message_key,
                Intent::from(MessageCorrelationIntent::Correlate),
                MessageCorrelationRecord {
                    process_instance_key: -1,
                    process_definition_key: -1,
                    ..correlation()
                }
                .into(),
            );
            rejection.rejection_type = RejectionType::NotFound;
            rejection.rejection_reason = reason;
            ctx.answer(request, rejection);
        }
        CorrelationOutcome::Open => {}
    }
    Ok(())
}
