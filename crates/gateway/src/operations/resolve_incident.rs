//! Resolve an incident: `INCIDENT RESOLVE` on the incident's partition.

use beeline_protocol::Record;
use beeline_protocol::intent::IncidentIntent;
use beeline_protocol::value::IncidentRecord;

use super::{acknowledged, operation_reference};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolveIncident {
    pub incident_key: i64,
    pub operation_reference: Option<u64>,
}

pub(crate) fn command(request: &ResolveIncident) -> Record {
    let mut record = Record::command(
        request.incident_key,
        IncidentIntent::Resolve,
        IncidentRecord {
            job_key: -1,
            ..IncidentRecord::default()
        },
    );
    record.operation_reference = operation_reference(request.operation_reference);
    record
}

pub async fn run(d: &Dispatcher, request: ResolveIncident) -> Result<(), GatewayError> {
    d.require(IncidentIntent::Resolve, "resolving incidents")?;
    acknowledged::<IncidentRecord>(d, "incidentKey", request.incident_key, command(&request)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_resolve_command() {
        let record = command(&ResolveIncident {
            incident_key: 6,
            operation_reference: Some(2),
        });
        assert_eq!(record.key, 6);
        assert_eq!(record.intent, IncidentIntent::Resolve.into());
        assert_eq!(record.operation_reference, 2);
    }
}
