mod correlated;
mod created;
mod deleted;

use beeline_protocol::intent::MessageStartEventSubscriptionIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        MessageStartEventSubscriptionIntent::Created,
        1,
        created::MessageStartEventSubscriptionCreatedApplier,
    );
    appliers.register(
        MessageStartEventSubscriptionIntent::Correlated,
        1,
        correlated::MessageStartEventSubscriptionCorrelatedApplier,
    );
    appliers.register(
        MessageStartEventSubscriptionIntent::Deleted,
        1,
        deleted::MessageStartEventSubscriptionDeletedApplier,
    );
}
