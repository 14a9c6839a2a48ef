//! Message subscriptions on the process instance's partition: the message's partition
//! confirms their opening and closing, and correlates messages to them.

mod correlate;
mod create;
mod delete;

use beeline_protocol::intent::ProcessMessageSubscriptionIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        ProcessMessageSubscriptionIntent::Create,
        create::ProcessMessageSubscriptionCreateProcessor,
    );
    processors.register(
        ProcessMessageSubscriptionIntent::Correlate,
        correlate::ProcessMessageSubscriptionCorrelateProcessor,
    );
    processors.register(
        ProcessMessageSubscriptionIntent::Delete,
        delete::ProcessMessageSubscriptionDeleteProcessor,
    );
}
