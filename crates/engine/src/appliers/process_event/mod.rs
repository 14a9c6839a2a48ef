mod triggered;
mod triggering;

use beeline_protocol::intent::ProcessEventIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        ProcessEventIntent::Triggering,
        1,
        triggering::ProcessEventTriggeringApplier,
    );
    appliers.register(
        ProcessEventIntent::Triggered,
        1,
        triggered::ProcessEventTriggeredApplier,
    );
}
