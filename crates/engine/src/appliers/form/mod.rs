//! Deployed forms.

mod created;
mod deleted;

use beeline_protocol::intent::FormIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(FormIntent::Created, 1, created::FormCreatedApplier);
    appliers.register(FormIntent::Deleted, 1, deleted::FormDeletedApplier);
}
