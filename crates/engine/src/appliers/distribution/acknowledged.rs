use beeline_protocol::Record;
use beeline_protocol::value::CommandDistributionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::partitions;
use crate::processing::value_of;
use crate::state::EngineState;

/// `COMMAND_DISTRIBUTION ACKNOWLEDGED`: one partition has the command.
pub(crate) struct CommandDistributionAcknowledgedApplier;

impl EventApplier for CommandDistributionAcknowledgedApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let distribution = value_of::<CommandDistributionRecord>(event)?;
        let partition =
            partitions::from_id(distribution.partition_id, "the acknowledging partition")?;
        state.processes_mut().remove_pending(event.key, partition);
        Ok(())
    }
}
