use beeline_protocol::Record;
use beeline_protocol::intent::CommandDistributionIntent;
use beeline_protocol::value::CommandDistributionRecord;

use crate::error::ProcessingError;
use crate::partitions;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `COMMAND_DISTRIBUTION ACKNOWLEDGE`: a partition received a distributed command. When the
/// last one has, the distribution is finished.
pub(crate) struct CommandDistributionAcknowledgeProcessor;

impl CommandProcessor for CommandDistributionAcknowledgeProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let acknowledgement = value_of::<CommandDistributionRecord>(command)?.clone();
        let partition =
            partitions::from_id(acknowledgement.partition_id, "the acknowledging partition")?;
        if !ctx
            .state()
            .processes()
            .is_distribution_pending(command.key, partition)?
        {
            // A repeated acknowledgement: already counted.
            return Ok(());
        }
        ctx.append_event(
            command.key,
            CommandDistributionIntent::Acknowledged,
            acknowledgement.clone(),
        )?;
        if ctx
            .state()
            .processes()
            .pending_partitions(command.key)?
            .is_empty()
        {
            ctx.append_event(
                command.key,
                CommandDistributionIntent::Finished,
                acknowledgement,
            )?;
        }
        Ok(())
    }
}
