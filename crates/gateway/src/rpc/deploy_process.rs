//! `DeployProcess` (deprecated since Zeebe 8): `DeployResource` for BPMN only, with the older
//! response shape.

use beeline_protocol::Record;
use beeline_protocol::intent::DeploymentIntent;
use beeline_protocol::value::DeploymentRecord;

use super::deploy_resource::deployment_command;
use super::value_of;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
#[allow(deprecated)]
use crate::proto::{DeployProcessRequest, DeployProcessResponse, ProcessMetadata};
use crate::routing::DEPLOYMENT_PARTITION;
use crate::validate::DEFAULT_TENANT;

#[allow(deprecated)]
pub(crate) fn command(request: &DeployProcessRequest) -> Result<Record, GatewayError> {
    deployment_command(
        "processes",
        request
            .processes
            .iter()
            .map(|p| (p.name.as_str(), p.definition.as_slice())),
        DEFAULT_TENANT.to_owned(),
    )
}

#[allow(deprecated)]
pub(crate) fn response(event: &Record) -> Result<DeployProcessResponse, GatewayError> {
    let deployed = value_of::<DeploymentRecord>(event)?;
    Ok(DeployProcessResponse {
        key: event.key,
        processes: deployed
            .processes_metadata
            .iter()
            .map(|p| ProcessMetadata {
                bpmn_process_id: p.bpmn_process_id.clone(),
                version: p.version,
                process_definition_key: p.process_definition_key,
                resource_name: p.resource_name.clone(),
                tenant_id: p.tenant_id.clone(),
            })
            .collect(),
    })
}

#[allow(deprecated)]
pub(crate) async fn handle(
    d: &Dispatcher,
    request: DeployProcessRequest,
) -> Result<DeployProcessResponse, GatewayError> {
    d.require(DeploymentIntent::Create, "deploying processes")?;
    let event = d.execute(DEPLOYMENT_PARTITION, command(&request)?).await?;
    response(&event)
}

#[cfg(test)]
#[allow(deprecated)]
mod tests {
    use super::*;
    use crate::proto::ProcessRequestObject;
    use beeline_protocol::value::ProcessMetadata as Process;

    #[test]
    fn request_and_response() {
        let record = command(&DeployProcessRequest {
            processes: vec![ProcessRequestObject {
                name: "a.bpmn".into(),
                definition: b"<x/>".to_vec(),
            }],
        })
        .unwrap();
        let deployment = record.value_as::<DeploymentRecord>().unwrap();
        assert_eq!(deployment.resources[0].resource_name, "a.bpmn");
        assert_eq!(deployment.tenant_id, "<default>");
        let created = DeploymentRecord {
            processes_metadata: vec![Process {
                bpmn_process_id: "a".into(),
                ..Process::default()
            }],
            ..DeploymentRecord::default()
        };
        let response = response(&Record::event(1, DeploymentIntent::Created, created)).unwrap();
        assert_eq!(response.processes[0].bpmn_process_id, "a");
        let none = command(&DeployProcessRequest { processes: vec![] }).unwrap_err();
        assert_eq!(none.to_string(), "No processes provided");
    }
}
