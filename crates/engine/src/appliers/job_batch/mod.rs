mod activated;

use beeline_protocol::intent::JobBatchIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        JobBatchIntent::Activated,
        1,
        activated::JobBatchActivatedApplier,
    );
}
