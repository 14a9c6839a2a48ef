mod created;
mod deleted;

use beeline_protocol::intent::SignalSubscriptionIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        SignalSubscriptionIntent::Created,
        1,
        created::SignalSubscriptionCreatedApplier,
    );
    appliers.register(
        SignalSubscriptionIntent::Deleted,
        1,
        deleted::SignalSubscriptionDeletedApplier,
    );
}
