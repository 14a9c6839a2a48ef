//! The partition's clock: pinned at an instant, or the system clock's.

mod pinned;
mod resetted;

use beeline_protocol::intent::ClockIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(ClockIntent::Pinned, 1, pinned::ClockPinnedApplier);
    appliers.register(ClockIntent::Resetted, 1, resetted::ClockResettedApplier);
}
