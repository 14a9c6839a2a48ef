//! Timers: the scheduler asks to trigger them when they are due.

mod trigger;

use beeline_protocol::intent::TimerIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(TimerIntent::Trigger, trigger::TimerTriggerProcessor);
}
