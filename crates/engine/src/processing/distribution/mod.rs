mod acknowledge;

use beeline_protocol::intent::CommandDistributionIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        CommandDistributionIntent::Acknowledge,
        acknowledge::CommandDistributionAcknowledgeProcessor,
    );
}
