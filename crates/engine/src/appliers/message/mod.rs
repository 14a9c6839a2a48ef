mod expired;
mod published;

use beeline_protocol::intent::MessageIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(
        MessageIntent::Published,
        1,
        published::MessagePublishedApplier,
    );
    appliers.register(MessageIntent::Expired, 1, expired::MessageExpiredApplier);
}
