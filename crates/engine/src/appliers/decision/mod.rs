mod created;
mod deleted;

use beeline_protocol::intent::{DecisionIntent, DecisionRequirementsIntent};

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        DecisionRequirementsIntent::Created,
        1,
        created::DecisionRequirementsCreatedApplier,
    );
    appliers.register(DecisionIntent::Created, 1, created::DecisionCreatedApplier);
    appliers.register(DecisionIntent::Deleted, 1, deleted::DecisionDeletedApplier);
    appliers.register(
        DecisionRequirementsIntent::Deleted,
        1,
        deleted::DecisionRequirementsDeletedApplier,
    );
}
