mod create;
mod decisions;
mod forms;
pub(super) mod start_events;

use beeline_protocol::intent::DeploymentIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(DeploymentIntent::Create, create::DeploymentCreateProcessor);
}
