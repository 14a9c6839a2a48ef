//! Signals: a broadcast triggers every signal subscription on every partition; signal start
//! events start instances on the partition that received the broadcast.

mod broadcast;

use beeline_protocol::intent::SignalIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(SignalIntent::Broadcast, broadcast::SignalBroadcastProcessor);
}
