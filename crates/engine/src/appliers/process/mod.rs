mod created;
mod deleted;

use beeline_protocol::intent::ProcessIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(ProcessIntent::Created, 1, created::ProcessCreatedApplier);
    appliers.register(ProcessIntent::Deleting, 1, deleted::ProcessDeletingApplier);
    appliers.register(ProcessIntent::Deleted, 1, deleted::ProcessDeletedApplier);
}
