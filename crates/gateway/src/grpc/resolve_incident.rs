//! `ResolveIncident`.

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::resolve_incident::{self, ResolveIncident};
use crate::proto::{ResolveIncidentRequest, ResolveIncidentResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: ResolveIncidentRequest,
) -> Result<ResolveIncidentResponse, GatewayError> {
    resolve_incident::run(
        d,
        ResolveIncident {
            incident_key: r.incident_key,
            operation_reference: r.operation_reference,
        },
    )
    .await?;
    Ok(ResolveIncidentResponse {})
}
