mod resolve;

use beeline_protocol::intent::IncidentIntent;

use super::Processors;

pub(super) fn register(processors: &mut Processors) {
    processors.register(IncidentIntent::Resolve, resolve::IncidentResolveProcessor);
}
