//! Camunda user tasks: their lifecycle in state, the transition under way with its
//! listeners' corrections, and the element instance waiting for them.

mod canceled;
mod completed;
mod creating;
mod transitioned;
mod variables_updating;

use beeline_protocol::intent::{UserTaskIntent as UT, VariableDocumentIntent};

use super::Appliers;
use crate::state::values::UserTaskLifecycle as L;
use transitioned::UserTaskTransitionStartedApplier as Started;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(UT::Creating, 1, creating::UserTaskCreatingApplier);
    appliers.register(UT::Created, 1, transitioned::UserTaskTransitionedApplier);
    appliers.register(UT::Assigning, 1, Started(L::Assigning));
    appliers.register(UT::Claiming, 1, Started(L::Claiming));
    appliers.register(UT::Assigned, 1, transitioned::UserTaskTransitionedApplier);
    appliers.register(UT::Updating, 1, Started(L::Updating));
    appliers.register(UT::Updated, 1, transitioned::UserTaskTransitionedApplier);
    appliers.register(UT::Completing, 1, Started(L::Completing));
    appliers.register(UT::Completed, 1, completed::UserTaskCompletedApplier);
    appliers.register(UT::Canceling, 1, Started(L::Canceling));
    appliers.register(UT::Canceled, 1, canceled::UserTaskCanceledApplier);
    appliers.register(UT::Corrected, 1, transitioned::UserTaskCorrectedApplier);
    appliers.register(UT::CompletionDenied, 1, transitioned::UserTaskDeniedApplier);
    appliers.register(UT::AssignmentDenied, 1, transitioned::UserTaskDeniedApplier);
    appliers.register(UT::UpdateDenied, 1, transitioned::UserTaskDeniedApplier);
    appliers.register(
        VariableDocumentIntent::Updating,
        1,
        variables_updating::VariableDocumentUpdatingApplier,
    );
}
