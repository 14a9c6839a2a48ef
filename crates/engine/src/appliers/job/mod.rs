//! Jobs in state: created, activated, failed, back again, gone.

mod canceled;
mod completed;
mod created;
mod error_thrown;
mod failed;
mod made_activatable;
mod retries_updated;
mod timeout_updated;

use beeline_protocol::intent::JobIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(JobIntent::Created, 1, created::JobCreatedApplier);
    appliers.register(JobIntent::Completed, 1, completed::JobCompletedApplier);
    appliers.register(JobIntent::Failed, 1, failed::JobFailedApplier);
    appliers.register(
        JobIntent::ErrorThrown,
        1,
        error_thrown::JobErrorThrownApplier,
    );
    appliers.register(JobIntent::Canceled, 1, canceled::JobCanceledApplier);
    appliers.register(
        JobIntent::RetriesUpdated,
        1,
        retries_updated::JobRetriesUpdatedApplier,
    );
    appliers.register(
        JobIntent::TimeoutUpdated,
        1,
        timeout_updated::JobTimeoutUpdatedApplier,
    );
    appliers.register(
        JobIntent::TimedOut,
        1,
        made_activatable::JobMadeActivatableApplier,
    );
    appliers.register(
        JobIntent::RecurredAfterBackoff,
        1,
        made_activatable::JobMadeActivatableApplier,
    );
    appliers.register(
        JobIntent::Yielded,
        1,
        made_activatable::JobMadeActivatableApplier,
    );
}
