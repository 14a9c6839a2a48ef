//! Deployed forms.

mod created;

use beeline_protocol::intent::FormIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(FormIntent::Created, 1, created::FormCreatedApplier);
}
