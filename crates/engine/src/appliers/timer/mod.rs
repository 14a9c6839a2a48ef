mod created;
mod ended;

use beeline_protocol::intent::TimerIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(TimerIntent::Created, 1, created::TimerCreatedApplier);
    appliers.register(TimerIntent::Triggered, 1, ended::TimerEndedApplier);
    appliers.register(TimerIntent::Canceled, 1, ended::TimerEndedApplier);
}
