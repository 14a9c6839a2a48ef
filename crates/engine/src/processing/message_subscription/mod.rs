//! Message subscriptions on the partition of the message's correlation key: opened and
//! closed on request of the instance's partition, which confirms each correlation or refuses
//! it (then the message goes to another instance of the process).

mod correlate;
mod create;
mod delete;
mod reject;

use beeline_protocol::intent::{MessageSubscriptionIntent, ProcessMessageSubscriptionIntent};
use beeline_protocol::value::{MessageSubscriptionRecord, ProcessMessageSubscriptionRecord};

use super::message::correlate::correlation_command;
use super::{ProcessingContext, Processors};
use crate::error::ProcessingError;
use crate::partitions;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        MessageSubscriptionIntent::Create,
        create::MessageSubscriptionCreateProcessor,
    );
    processors.register(
        MessageSubscriptionIntent::Correlate,
        correlate::MessageSubscriptionCorrelateProcessor,
    );
    processors.register(
        MessageSubscriptionIntent::Reject,
        reject::MessageSubscriptionRejectProcessor,
    );
    processors.register(
        MessageSubscriptionIntent::Delete,
        delete::MessageSubscriptionDeleteProcessor,
    );
}

/// Tells the instance's partition that its request (`intent`: CREATE or DELETE) was done.
fn confirm(
    ctx: &mut ProcessingContext<'_, '_>,
    record: &MessageSubscriptionRecord,
    intent: ProcessMessageSubscriptionIntent,
) -> Result<(), ProcessingError> {
    let partition = partitions::of_key(
        record.process_instance_key,
        "the message subscription's process instance key",
    )?;
    let confirmation = ProcessMessageSubscriptionRecord {
        message_key: -1,
        variables: Vec::new(),
        ..correlation_command(ctx.partition_id(), record)
    };
    ctx.send(partition, -1, intent, confirmation);
    Ok(())
}
