//! Message subscriptions on the partition of the message's correlation key: opened and
//! closed on request of the instance's partition, which confirms each correlation or refuses
//! it (then the message goes to another instance of the process).

mod correlate;
mod create;
mod delete;
mod reject;

use beeline_protocol::intent::{MessageSubscriptionIntent, ProcessMessageSubscriptionIntent};
use beeline_protocol::key;
use beeline_protocol::value::{MessageSubscriptionRecord, ProcessMessageSubscriptionRecord};

use super::{ProcessingContext, Processors};

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
) {
    let partition = key::partition_of(record.process_instance_key).unwrap_or(1);
    let confirmation = ProcessMessageSubscriptionRecord {
        subscription_partition_id: i32::from(ctx.partition_id()),
        process_instance_key: record.process_instance_key,
        element_instance_key: record.element_instance_key,
        message_key: -1,
        message_name: record.message_name.clone(),
        variables: Vec::new(),
        interrupting: record.interrupting,
        bpmn_process_id: record.bpmn_process_id.clone(),
        correlation_key: record.correlation_key.clone(),
        element_id: String::new(),
        tenant_id: record.tenant_id.clone(),
        process_definition_key: record.process_definition_key,
    };
    ctx.send(partition, -1, intent, confirmation);
}
