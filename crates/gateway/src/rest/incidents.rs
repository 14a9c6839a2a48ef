//! `POST /v2/incidents/{incidentKey}/resolution`.

use axum::extract::State;
use axum::response::Response;

use super::json;
use super::process_instances::OperationReference;
use super::{Call, Gateway, PathParam, Reply, answer};
use crate::operations::resolve_incident::{self, ResolveIncident};

pub(super) async fn resolve(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "ResolveIncident", &call.path, async {
        let incident_key = json::path_key("incidentKey", &key)?;
        let body: OperationReference = json::body(&call.body)?;
        resolve_incident::run(
            &d,
            ResolveIncident {
                incident_key,
                operation_reference: body.operation_reference,
            },
        )
        .await?;
        Ok(Reply::NoContent)
    })
    .await
}
