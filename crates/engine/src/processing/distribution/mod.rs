//! Commands distributed to every other partition (deployments, signals), tracked until each
//! partition acknowledged them and sent again until then.

mod acknowledge;

use beeline_protocol::intent::CommandDistributionIntent;
use beeline_protocol::value::CommandDistributionRecord;
use beeline_protocol::{Intent, Record, Value};

use super::{ProcessingContext, Processors};
use crate::error::ProcessingError;
use crate::partitions;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        CommandDistributionIntent::Acknowledge,
        acknowledge::CommandDistributionAcknowledgeProcessor,
    );
}

/// Sends the command `intent` with `value` under `key` to every other partition, tracked
/// until each acknowledged it.
pub(crate) fn distribute<V: Value>(
    ctx: &mut ProcessingContext<'_, '_>,
    key: i64,
    intent: V::Intent,
    value: V,
) -> Result<(), ProcessingError> {
    let partitions: Vec<u16> = (1..=ctx.partition_count())
        .filter(|p| *p != ctx.partition_id())
        .collect();
    if partitions.is_empty() {
        return Ok(());
    }
    let command_intent = intent.into();
    let record_value = value.clone().into();
    ctx.append_event(
        key,
        CommandDistributionIntent::Started,
        CommandDistributionRecord::new(ctx.partition_id(), command_intent, &record_value),
    )?;
    for partition in partitions {
        ctx.append_event(
            key,
            CommandDistributionIntent::Distributing,
            CommandDistributionRecord::new(partition, command_intent, &record_value),
        )?;
        ctx.send(partition, key, intent, value.clone());
    }
    Ok(())
}

/// Tells the partition that distributed `command` that this one has it (also when it
/// arrives a second time).
pub(crate) fn acknowledge(
    ctx: &mut ProcessingContext<'_, '_>,
    command: &Record,
) -> Result<(), ProcessingError> {
    let origin = partitions::of_key(command.key, "the distributed command's key")?;
    let intent: Intent = command.intent;
    ctx.send(
        origin,
        command.key,
        CommandDistributionIntent::Acknowledge,
        CommandDistributionRecord {
            partition_id: i32::from(ctx.partition_id()),
            queue_id: String::new(),
            value_type: i32::from(intent.value_type().value()),
            intent: i32::from(intent.value()),
            command_value: Vec::new(),
        },
    );
    Ok(())
}
