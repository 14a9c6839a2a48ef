mod created;

use beeline_protocol::intent::ErrorIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(ErrorIntent::Created, 1, created::ErrorCreatedApplier);
}
