mod created;
mod resolved;

use beeline_protocol::intent::IncidentIntent;

use super::Appliers;

pub(super) fn register(appliers: &mut Appliers) {
    appliers.register(IncidentIntent::Created, 1, created::IncidentCreatedApplier);
    appliers.register(
        IncidentIntent::Created,
        2,
        created::IncidentCreatedV2Applier,
    );
    appliers.register(
        IncidentIntent::Resolved,
        1,
        resolved::IncidentResolvedApplier,
    );
}
