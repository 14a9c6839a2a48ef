//! `POST /v2/incidents/{incidentKey}/resolution`.

use axum::extract::State;
use axum::response::Response;

use super::process_instances::OperationReference;
use super::{Call, Gateway, PathParam, keyed_command};
use crate::operations::resolve_incident::{self, ResolveIncident};

pub(super) async fn resolve(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    keyed_command(
        &d,
        "ResolveIncident",
        "incidentKey",
        &key,
        &call,
        |incident_key, body: OperationReference| {
            resolve_incident::run(
                &d,
                ResolveIncident {
                    incident_key,
                    operation_reference: body.operation_reference,
                },
            )
        },
    )
    .await
}
