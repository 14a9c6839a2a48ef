//! The element lifecycle in state: instances, their children, tokens on flows.

mod activating;
mod ended;
mod sequence_flow_taken;
mod transitioned;

use beeline_protocol::intent::ProcessInstanceIntent as PI;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        PI::ElementActivating,
        1,
        activating::ElementActivatingApplier,
    );
    appliers.register(
        PI::ElementActivated,
        1,
        transitioned::ElementTransitionedApplier,
    );
    appliers.register(
        PI::ElementCompleting,
        1,
        transitioned::ElementTransitionedApplier,
    );
    appliers.register(
        PI::ElementTerminating,
        1,
        transitioned::ElementTransitionedApplier,
    );
    appliers.register(PI::ElementCompleted, 1, ended::ElementEndedApplier);
    appliers.register(PI::ElementTerminated, 1, ended::ElementEndedApplier);
    appliers.register(
        PI::SequenceFlowTaken,
        1,
        sequence_flow_taken::SequenceFlowTakenApplier,
    );
}
