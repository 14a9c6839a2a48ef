//! Deploy resources (BPMN, DMN, forms): `DEPLOYMENT CREATE` on the deployment partition, which
//! distributes the deployment to every other partition. Never shed by backpressure.

use beeline_protocol::Record;
use beeline_protocol::intent::DeploymentIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::{DeploymentRecord, DeploymentResource};

use super::{Keyed, keyed};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::routing::DEPLOYMENT_PARTITION;
use crate::tenancy;
use crate::validate;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeployResources {
    pub resources: Vec<Resource>,
    pub tenant_id: String,
}

/// One file of a deployment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resource {
    /// The file name; its extension says what it is (`.bpmn`, `.dmn`, `.form`).
    pub name: String,
    pub content: Vec<u8>,
}

pub(crate) fn command(request: DeployResources) -> Result<Record, GatewayError> {
    if request.resources.is_empty() {
        return Err(GatewayError::InvalidArgument(
            "No resources provided".into(),
        ));
    }
    let tenant_id = tenancy::tenant("DeployResource", &request.tenant_id)?;
    let mut resources = Vec::with_capacity(request.resources.len());
    for (i, resource) in request.resources.into_iter().enumerate() {
        validate::not_empty(&format!("resources[{i}].name"), &resource.name)?;
        resources.push(DeploymentResource {
            resource: resource.content,
            resource_name: resource.name,
        });
    }
    Ok(Record::command(
        NO_KEY,
        DeploymentIntent::Create,
        DeploymentRecord {
            resources,
            tenant_id,
            deployment_key: NO_KEY,
            ..DeploymentRecord::default()
        },
    ))
}

/// The deployment's key and the CREATED event's value: the metadata of every process,
/// decision, decision requirements graph and form it holds.
pub async fn run(
    d: &Dispatcher,
    request: DeployResources,
) -> Result<Keyed<DeploymentRecord>, GatewayError> {
    d.require(DeploymentIntent::Create, "deploying resources")?;
    let command = command(request)?;
    keyed(d.execute(DEPLOYMENT_PARTITION, command).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_a_create_command() {
        let record = command(DeployResources {
            resources: vec![Resource {
                name: "order.bpmn".into(),
                content: b"<definitions/>".to_vec(),
            }],
            tenant_id: String::new(),
        })
        .unwrap();
        assert_eq!(record.intent, DeploymentIntent::Create.into());
        let deployment = record.value_as::<DeploymentRecord>().unwrap();
        assert_eq!(deployment.resources[0].resource_name, "order.bpmn");
        assert_eq!(deployment.resources[0].resource, b"<definitions/>");
        assert_eq!(deployment.tenant_id, "<default>");
    }

    #[test]
    fn empty_deployments_are_refused() {
        let none = command(DeployResources::default()).unwrap_err();
        assert_eq!(none.to_string(), "No resources provided");
        let unnamed = command(DeployResources {
            resources: vec![Resource::default()],
            tenant_id: String::new(),
        })
        .unwrap_err();
        assert_eq!(unnamed.to_string(), "No resources[0].name provided");
    }
}
