mod correlated;
mod created;
mod creating;
mod deleted;
mod deleting;

use beeline_protocol::intent::ProcessMessageSubscriptionIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        ProcessMessageSubscriptionIntent::Creating,
        1,
        creating::ProcessMessageSubscriptionCreatingApplier,
    );
    appliers.register(
        ProcessMessageSubscriptionIntent::Created,
        1,
        created::ProcessMessageSubscriptionCreatedApplier,
    );
    appliers.register(
        ProcessMessageSubscriptionIntent::Correlated,
        1,
        correlated::ProcessMessageSubscriptionCorrelatedApplier,
    );
    appliers.register(
        ProcessMessageSubscriptionIntent::Deleting,
        1,
        deleting::ProcessMessageSubscriptionDeletingApplier,
    );
    appliers.register(
        ProcessMessageSubscriptionIntent::Deleted,
        1,
        deleted::ProcessMessageSubscriptionDeletedApplier,
    );
}
