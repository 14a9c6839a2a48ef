pub(crate) mod correlate;
mod expire;
mod publish;

use beeline_protocol::intent::MessageIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(MessageIntent::Publish, publish::MessagePublishProcessor);
    processors.register(MessageIntent::Expire, expire::MessageExpireProcessor);
}
