//! The engine's clock, as Camunda's `/v2/clock` moves it for tests: pinned at an instant on
//! every partition (time stands still there; timers, job time-outs and message time-to-live
//! follow it) or reset to the system clock. The partition where the command arrives
//! distributes it to every other one.

mod change;

use beeline_protocol::intent::ClockIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(ClockIntent::Pin, change::ClockChangeProcessor);
    processors.register(ClockIntent::Reset, change::ClockChangeProcessor);
}
