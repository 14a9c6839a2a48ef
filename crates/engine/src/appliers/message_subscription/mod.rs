mod correlated;
mod correlating;
mod created;
mod deleted;
mod rejected;

use beeline_protocol::intent::MessageSubscriptionIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        MessageSubscriptionIntent::Created,
        1,
        created::MessageSubscriptionCreatedApplier,
    );
    appliers.register(
        MessageSubscriptionIntent::Correlating,
        1,
        correlating::MessageSubscriptionCorrelatingApplier,
    );
    appliers.register(
        MessageSubscriptionIntent::Correlated,
        1,
        correlated::MessageSubscriptionCorrelatedApplier,
    );
    appliers.register(
        MessageSubscriptionIntent::Rejected,
        1,
        rejected::MessageSubscriptionRejectedApplier,
    );
    appliers.register(
        MessageSubscriptionIntent::Deleted,
        1,
        deleted::MessageSubscriptionDeletedApplier,
    );
}
