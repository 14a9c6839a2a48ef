//! Correlating messages on their partition: a published message to the subscriptions that
//! wait for it and to message start events; a new subscription to a buffered message. A
//! message correlates at most once per process (by BPMN process id), and a message start
//! event with a correlation key starts one instance at a time per key.

use std::collections::HashSet;

use beeline_protocol::intent::{
    MessageStartEventSubscriptionIntent, MessageSubscriptionIntent,
    ProcessMessageSubscriptionIntent,
};
use beeline_protocol::value::{
    MessageRecord, MessageSubscriptionRecord, ProcessMessageSubscriptionRecord,
};

use crate::error::ProcessingError;
use crate::partitions;
use crate::processing::ProcessingContext;
use crate::processing::bpmn::behavior::events;
use crate::state::values::{
    CorrelationKeyLock, StoredMessageStartEventSubscription, StoredMessageSubscription,
};

/// What a published message reached.
#[derive(Debug, Default)]
pub(crate) struct Reached {
    /// The first instance a message start event started: (instance key, definition key).
    pub started: Option<(i64, i64)>,
    /// Subscriptions the message was sent to (their instances take it or refuse it later).
    pub sent: usize,
}

/// Correlates a just published message to every waiting subscription (one per process) and
/// to the message start events whose process may start.
pub(crate) fn correlate_published(
    ctx: &mut ProcessingContext<'_, '_>,
    message_key: i64,
    message: &MessageRecord,
) -> Result<Reached, ProcessingError> {
    let mut reached = Reached::default();
    let mut processes = HashSet::new();
    for stored in ctx.state().message_subscriptions().by_name(
        &message.tenant_id,
        &message.name,
        &message.correlation_key,
    )? {
        let record = stored.record();
        if stored.correlating
            || processes.contains(&record.bpmn_process_id)
            || ctx
                .state()
                .messages()
                .is_correlated(message_key, &record.bpmn_process_id)?
        {
            continue;
        }
        processes.insert(record.bpmn_process_id.clone());
        correlate(ctx, &stored, message_key, message)?;
        reached.sent += 1;
    }
    for subscription in ctx
        .state()
        .message_start_subscriptions()
        .by_name(&message.tenant_id, &message.name)?
    {
        if start_allowed(ctx, &subscription, message_key, &message.correlation_key)?
            && let Some(instance) = start_instance(ctx, &subscription, message_key, message)?
        {
            reached
                .started
                .get_or_insert((instance, subscription.record().process_definition_key));
        }
    }
    Ok(reached)
}

/// A subscription that can take a message (new, or done with its last one) takes the oldest
/// buffered message not yet correlated to its process.
pub(crate) fn correlate_next_message(
    ctx: &mut ProcessingContext<'_, '_>,
    stored: &StoredMessageSubscription,
) -> Result<(), ProcessingError> {
    let record = stored.record();
    let now = ctx.now();
    for message_key in ctx.state().messages().keys_by_name(
        &record.tenant_id,
        &record.message_name,
        &record.correlation_key,
    )? {
        let Some(message) = ctx.state().messages().get(message_key)? else {
            continue;
        };
        if message.deadline > now
            && !ctx
                .state()
                .messages()
                .is_correlated(message_key, &record.bpmn_process_id)?
        {
            return correlate(ctx, stored, message_key, &message);
        }
    }
    Ok(())
}

/// A subscription other than `except` of the same process waiting for the message takes it
/// (after the instance it went to refused it).
pub(crate) fn correlate_elsewhere(
    ctx: &mut ProcessingContext<'_, '_>,
    message_key: i64,
    bpmn_process_id: &str,
    except: i64,
) -> Result<(), ProcessingError> {
    let Some(message) = ctx.state().messages().get(message_key)? else {
        return Ok(());
    };
    if message.deadline <= ctx.now()
        || ctx
            .state()
            .messages()
            .is_correlated(message_key, bpmn_process_id)?
    {
        return Ok(());
    }
    for stored in ctx.state().message_subscriptions().by_name(
        &message.tenant_id,
        &message.name,
        &message.correlation_key,
    )? {
        let record = stored.record();
        if !stored.correlating
            && record.bpmn_process_id == bpmn_process_id
            && record.element_instance_key != except
        {
            return correlate(ctx, &stored, message_key, &message);
        }
    }
    Ok(())
}

/// MESSAGE_SUBSCRIPTION CORRELATING, and the message sent to the instance's partition.
fn correlate(
    ctx: &mut ProcessingContext<'_, '_>,
    stored: &StoredMessageSubscription,
    message_key: i64,
    message: &MessageRecord,
) -> Result<(), ProcessingError> {
    let record = MessageSubscriptionRecord {
        message_key,
        variables: message.variables.clone(),
        ..stored.record()
    };
    ctx.append_event(
        stored.key,
        MessageSubscriptionIntent::Correlating,
        record.clone(),
    )?;
    send_correlate(ctx, &record)
}

/// Sends PROCESS_MESSAGE_SUBSCRIPTION CORRELATE to the instance's partition.
fn send_correlate(
    ctx: &mut ProcessingContext<'_, '_>,
    record: &MessageSubscriptionRecord,
) -> Result<(), ProcessingError> {
    let partition = partitions::of_key(
        record.process_instance_key,
        "the message subscription's process instance key",
    )?;
    let command = correlation_command(ctx.partition_id(), record);
    ctx.send(
        partition,
        -1,
        ProcessMessageSubscriptionIntent::Correlate,
        command,
    );
    Ok(())
}

/// The PROCESS_MESSAGE_SUBSCRIPTION CORRELATE command for a subscription correlating a
/// message on this partition (`partition_id`).
pub(crate) fn correlation_command(
    partition_id: u16,
    record: &MessageSubscriptionRecord,
) -> ProcessMessageSubscriptionRecord {
    ProcessMessageSubscriptionRecord {
        subscription_partition_id: i32::from(partition_id),
        process_instance_key: record.process_instance_key,
        element_instance_key: record.element_instance_key,
        message_key: record.message_key,
        message_name: record.message_name.clone(),
        variables: record.variables.clone(),
        interrupting: record.interrupting,
        bpmn_process_id: record.bpmn_process_id.clone(),
        correlation_key: record.correlation_key.clone(),
        element_id: String::new(),
        tenant_id: record.tenant_id.clone(),
        process_definition_key: record.process_definition_key,
    }
}

/// Whether a message may start an instance at this start event: not correlated to the
/// process yet, and no instance with its correlation key is active.
fn start_allowed(
    ctx: &ProcessingContext<'_, '_>,
    subscription: &StoredMessageStartEventSubscription,
    message_key: i64,
    correlation_key: &str,
) -> Result<bool, ProcessingError> {
    let record = subscription.record();
    let messages = ctx.state().messages();
    Ok(
        !messages.is_correlated(message_key, &record.bpmn_process_id)?
            && (correlation_key.is_empty()
                || messages
                    .active_instance(&record.tenant_id, &record.bpmn_process_id, correlation_key)?
                    .is_none()),
    )
}

/// Starts an instance at a message start event: its key, unless the process or its start
/// event is gone.
fn start_instance(
    ctx: &mut ProcessingContext<'_, '_>,
    subscription: &StoredMessageStartEventSubscription,
    message_key: i64,
    message: &MessageRecord,
) -> Result<Option<i64>, ProcessingError> {
    let record = subscription.record();
    let Some(process) = ctx
        .state()
        .processes()
        .deployed(record.process_definition_key)?
    else {
        return Ok(None);
    };
    let Some(start) = process.element(&record.start_event_id) else {
        return Ok(None);
    };
    let instance_key = ctx.next_key()?;
    ctx.append_event(
        subscription.key,
        MessageStartEventSubscriptionIntent::Correlated,
        beeline_protocol::value::MessageStartEventSubscriptionRecord {
            process_instance_key: instance_key,
            correlation_key: message.correlation_key.clone(),
            message_key,
            variables: message.variables.clone(),
            ..record
        },
    )?;
    events::start_instance(
        ctx,
        &process,
        start,
        message.variables.clone(),
        instance_key,
    )?;
    Ok(Some(instance_key))
}

/// An instance a message started ended and freed its correlation key: the next buffered
/// message (of its tenant) for that key starts the next instance, at the latest version's
/// start event.
pub(crate) fn start_next_buffered(
    ctx: &mut ProcessingContext<'_, '_>,
    held: &CorrelationKeyLock,
) -> Result<(), ProcessingError> {
    let (tenant, correlation_key) = (held.tenant_id.as_str(), held.correlation_key.as_str());
    let Some((_, latest)) = ctx
        .state()
        .processes()
        .latest(tenant, &held.bpmn_process_id)?
    else {
        return Ok(());
    };
    let now = ctx.now();
    for subscription in ctx
        .state()
        .message_start_subscriptions()
        .of_process(latest)?
    {
        let name = subscription.record().message_name;
        for message_key in ctx
            .state()
            .messages()
            .keys_by_name(tenant, &name, correlation_key)?
        {
            let Some(message) = ctx.state().messages().get(message_key)? else {
                continue;
            };
            if message.deadline > now
                && start_allowed(ctx, &subscription, message_key, correlation_key)?
            {
                return start_instance(ctx, &subscription, message_key, &message).map(drop);
            }
        }
    }
    Ok(())
}
