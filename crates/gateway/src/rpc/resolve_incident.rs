//! `ResolveIncident` → `INCIDENT RESOLVE` on the incident's partition.

use beeline_protocol::Record;
use beeline_protocol::intent::IncidentIntent;
use beeline_protocol::value::IncidentRecord;

use super::{operation_reference, value_of};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{ResolveIncidentRequest, ResolveIncidentResponse};
use crate::validate;

pub(crate) fn command(request: &ResolveIncidentRequest) -> Record {
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

pub(crate) fn response(event: &Record) -> Result<ResolveIncidentResponse, GatewayError> {
    value_of::<IncidentRecord>(event)?;
    Ok(ResolveIncidentResponse {})
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: ResolveIncidentRequest,
) -> Result<ResolveIncidentResponse, GatewayError> {
    d.require(IncidentIntent::Resolve, "resolving incidents")?;
    let partition = validate::key("incidentKey", request.incident_key, d.partition_count())?;
    let event = d.execute(partition, command(&request)).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_resolve_command() {
        let record = command(&ResolveIncidentRequest {
            incident_key: 13,
            operation_reference: None,
        });
        assert_eq!(record.key, 13);
        assert_eq!(record.intent, IncidentIntent::Resolve.into());
        let incident = record.value_as::<IncidentRecord>().unwrap();
        assert!(
            response(&Record::event(
                13,
                IncidentIntent::Resolved,
                incident.clone()
            ))
            .is_ok()
        );
    }
}
