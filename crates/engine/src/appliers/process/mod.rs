mod created;

use beeline_protocol::intent::ProcessIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(ProcessIntent::Created, 1, created::ProcessCreatedApplier);
}
