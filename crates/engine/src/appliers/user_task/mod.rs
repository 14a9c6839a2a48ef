//! Camunda user tasks: their lifecycle in state, and the element instance waiting for them.

mod canceled;
mod completed;
mod creating;
mod transitioned;

use beeline_protocol::intent::UserTaskIntent as UT;

use super::Appliers;
use crate::state::values::UserTaskLifecycle as L;
use transitioned::UserTaskTransitionedApplier as Transitioned;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(UT::Creating, 1, creating::UserTaskCreatingApplier);
    appliers.register(UT::Created, 1, Transitioned(L::Created));
    appliers.register(UT::Assigning, 1, Transitioned(L::Assigning));
    appliers.register(UT::Claiming, 1, Transitioned(L::Claiming));
    appliers.register(UT::Assigned, 1, Transitioned(L::Created));
    appliers.register(UT::Updating, 1, Transitioned(L::Updating));
    appliers.register(UT::Updated, 1, Transitioned(L::Created));
    appliers.register(UT::Completing, 1, Transitioned(L::Completing));
    appliers.register(UT::Completed, 1, completed::UserTaskCompletedApplier);
    appliers.register(UT::Canceling, 1, Transitioned(L::Canceling));
    appliers.register(UT::Canceled, 1, canceled::UserTaskCanceledApplier);
}
