use beeline_protocol::intent::{MessageSubscriptionIntent, ProcessMessageSubscriptionIntent};
use beeline_protocol::value::{MessageSubscriptionRecord, ProcessMessageSubscriptionRecord};
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::partitions;
use crate::processing::bpmn::behavior::{events, subscriptions, variables};
use crate::processing::{CommandProcessor, ProcessingContext, value_of};
use crate::state::values::SubscriptionLifecycle;

/// `PROCESS_MESSAGE_SUBSCRIPTION CORRELATE`: a message for a waiting element instance. It
/// triggers the catch element and is confirmed to the message's partition; when the instance
/// cannot take it (gone, leaving, or caught something else first) it is refused, and the
/// message's partition offers it to another instance.
pub(crate) struct ProcessMessageSubscriptionCorrelateProcessor;

impl CommandProcessor for ProcessMessageSubscriptionCorrelateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<ProcessMessageSubscriptionRecord>(command)?.clone();
        let stored = ctx
            .state()
            .process_message_subscriptions()
            .get(request.element_instance_key, &request.message_name)?;
        let stored = match stored {
            Some(stored) if stored.lifecycle()? != SubscriptionLifecycle::Deleting => Some(stored),
            _ => None,
        };
        let Some(stored) = stored else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to correlate a process message subscription with element key '{}' and message name '{}', but no such open subscription was found",
                    request.element_instance_key, request.message_name
                ),
            );
            refuse(ctx, &request)?;
            return Ok(());
        };
        let subscription = stored.record();
        let catch = match ctx
            .state()
            .element_instances()
            .get(request.element_instance_key)?
        {
            Some(instance) => {
                let process = ctx
                    .state()
                    .processes()
                    .deployed(subscription.process_definition_key)?;
                process.and_then(|p| {
                    events::catch_of(&p, &instance, &subscription.element_id).map(|c| (p, c))
                })
            }
            None => None,
        };
        let Some((process, catch)) = catch else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to correlate a message to element instance with key '{}', but it is not active",
                    request.element_instance_key
                ),
            );
            refuse(ctx, &request)?;
            return Ok(());
        };
        if !events::can_trigger(ctx, &catch)? {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to correlate a message to element instance with key '{}', but it cannot take an event now",
                    request.element_instance_key
                ),
            );
            refuse(ctx, &request)?;
            return Ok(());
        }
        let correlated = ProcessMessageSubscriptionRecord {
            message_key: request.message_key,
            variables: request.variables.clone(),
            ..subscription
        };
        ctx.append_event(
            stored.key,
            ProcessMessageSubscriptionIntent::Correlated,
            correlated.clone(),
        )?;
        // Checked when the message was published: what does not read now is damage.
        let message_variables =
            variables::Document::parse(&request.variables).map_err(|reason| {
                ProcessingError::Internal(format!(
                    "the variables of message {} do not read: {reason}",
                    request.message_key
                ))
            })?;
        events::trigger(ctx, &process, &catch, &message_variables)?;
        confirm(ctx, &correlated, MessageSubscriptionIntent::Correlate)?;
        Ok(())
    }
}

/// Refuses the message: the message's partition gives it to another instance.
fn refuse(
    ctx: &mut ProcessingContext<'_, '_>,
    request: &ProcessMessageSubscriptionRecord,
) -> Result<(), ProcessingError> {
    confirm(ctx, request, MessageSubscriptionIntent::Reject)
}

fn confirm(
    ctx: &mut ProcessingContext<'_, '_>,
    record: &ProcessMessageSubscriptionRecord,
    intent: MessageSubscriptionIntent,
) -> Result<(), ProcessingError> {
    let partition = partitions::from_id(
        record.subscription_partition_id,
        "the process message subscription's partition",
    )?;
    let confirmation = MessageSubscriptionRecord {
        message_key: record.message_key,
        ..subscriptions::message_subscription(record)
    };
    ctx.send(partition, -1, intent, confirmation);
    Ok(())
}
