mod acknowledged;
mod distributing;

use beeline_protocol::intent::CommandDistributionIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        CommandDistributionIntent::Distributing,
        1,
        distributing::CommandDistributionDistributingApplier,
    );
    appliers.register(
        CommandDistributionIntent::Acknowledged,
        1,
        acknowledged::CommandDistributionAcknowledgedApplier,
    );
}
