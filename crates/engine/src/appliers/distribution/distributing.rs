use beeline_protocol::Record;
use beeline_protocol::value::CommandDistributionRecord;

use crate::appliers::EventApplier;
use crate::error::ProcessingError;
use crate::partitions;
use crate::processing::value_of;
use crate::state::EngineState;

/// `COMMAND_DISTRIBUTION DISTRIBUTING`: the command went to a partition; it stays pending (and
/// is sent again) until that partition acknowledges it.
pub(crate) struct CommandDistributionDistributingApplier;

impl EventApplier for CommandDistributionDistributingApplier {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError> {
        let distribution = value_of::<CommandDistributionRecord>(event)?;
        let partition = partitions::from_id(distribution.partition_id, "the target partition")?;
        state
            .processes_mut()
            .add_pending(event.key, partition, distribution);
        Ok(())
    }
}
