//! `DeployResource` → `DEPLOYMENT CREATE` on the deployment partition, which distributes it.
//! Never shed by backpressure (as in Zeebe).

use beeline_protocol::Record;
use beeline_protocol::intent::DeploymentIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::{DeploymentRecord, DeploymentResource};

use super::value_of;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{
    DecisionMetadata, DecisionRequirementsMetadata, DeployResourceRequest, DeployResourceResponse,
    Deployment, FormMetadata, ProcessMetadata, deployment,
};
use crate::routing::DEPLOYMENT_PARTITION;
use crate::validate;

/// The deployment of named resources; `field` names the request's list in errors.
pub(crate) fn deployment_command<'a>(
    field: &str,
    resources: impl ExactSizeIterator<Item = (&'a str, &'a [u8])>,
    tenant_id: String,
) -> Result<Record, GatewayError> {
    if resources.len() == 0 {
        return Err(GatewayError::InvalidArgument(format!(
            "No {field} provided"
        )));
    }
    let mut deployed = Vec::with_capacity(resources.len());
    for (i, (name, content)) in resources.enumerate() {
        validate::not_empty(&format!("{field}[{i}].name"), name)?;
        deployed.push(DeploymentResource {
            resource: content.to_vec(),
            resource_name: name.to_owned(),
        });
    }
    Ok(Record::command(
        NO_KEY,
        DeploymentIntent::Create,
        DeploymentRecord {
            resources: deployed,
            tenant_id,
            deployment_key: NO_KEY,
            ..DeploymentRecord::default()
        },
    ))
}

pub(crate) fn command(request: &DeployResourceRequest) -> Result<Record, GatewayError> {
    let tenant_id = validate::tenant("DeployResource", &request.tenant_id)?;
    deployment_command(
        "resources",
        request
            .resources
            .iter()
            .map(|r| (r.name.as_str(), r.content.as_slice())),
        tenant_id,
    )
}

/// Processes, then decisions, then decision requirements, then forms, as Zeebe lists them.
pub(crate) fn response(event: &Record) -> Result<DeployResourceResponse, GatewayError> {
    let deployed = value_of::<DeploymentRecord>(event)?;
    let mut deployments = Vec::new();
    for p in &deployed.processes_metadata {
        deployments.push(deployment::Metadata::Process(ProcessMetadata {
            bpmn_process_id: p.bpmn_process_id.clone(),
            version: p.version,
            process_definition_key: p.process_definition_key,
            resource_name: p.resource_name.clone(),
            tenant_id: p.tenant_id.clone(),
        }));
    }
    for d in &deployed.decisions_metadata {
        deployments.push(deployment::Metadata::Decision(DecisionMetadata {
            dmn_decision_id: d.decision_id.clone(),
            dmn_decision_name: d.decision_name.clone(),
            version: d.version,
            decision_key: d.decision_key,
            dmn_decision_requirements_id: d.decision_requirements_id.clone(),
            decision_requirements_key: d.decision_requirements_key,
            tenant_id: d.tenant_id.clone(),
        }));
    }
    for r in &deployed.decision_requirements_metadata {
        deployments.push(deployment::Metadata::DecisionRequirements(
            DecisionRequirementsMetadata {
                dmn_decision_requirements_id: r.decision_requirements_id.clone(),
                dmn_decision_requirements_name: r.decision_requirements_name.clone(),
                version: r.decision_requirements_version,
                decision_requirements_key: r.decision_requirements_key,
                resource_name: r.resource_name.clone(),
                tenant_id: r.tenant_id.clone(),
            },
        ));
    }
    for f in &deployed.form_metadata {
        deployments.push(deployment::Metadata::Form(FormMetadata {
            form_id: f.form_id.clone(),
            version: f.version,
            form_key: f.form_key,
            resource_name: f.resource_name.clone(),
            tenant_id: f.tenant_id.clone(),
        }));
    }
    Ok(DeployResourceResponse {
        key: event.key,
        deployments: deployments
            .into_iter()
            .map(|metadata| Deployment {
                metadata: Some(metadata),
            })
            .collect(),
        tenant_id: deployed.tenant_id.clone(),
    })
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: DeployResourceRequest,
) -> Result<DeployResourceResponse, GatewayError> {
    d.require(DeploymentIntent::Create, "deploying resources")?;
    let event = d.execute(DEPLOYMENT_PARTITION, command(&request)?).await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Resource;
    use beeline_protocol::value::{DecisionMetadata as Decision, ProcessMetadata as Process};

    #[test]
    fn request_becomes_a_create_command() {
        let record = command(&DeployResourceRequest {
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
        let none = command(&DeployResourceRequest {
            resources: Vec::new(),
            tenant_id: String::new(),
        })
        .unwrap_err();
        assert_eq!(none.to_string(), "No resources provided");
        let unnamed = command(&DeployResourceRequest {
            resources: vec![Resource {
                name: String::new(),
                content: Vec::new(),
            }],
            tenant_id: String::new(),
        })
        .unwrap_err();
        assert_eq!(unnamed.to_string(), "No resources[0].name provided");
    }

    #[test]
    fn created_event_lists_processes_before_decisions() {
        let created = DeploymentRecord {
            decisions_metadata: vec![Decision {
                decision_id: "d".into(),
                decision_key: 5,
                ..Decision::default()
            }],
            processes_metadata: vec![Process {
                bpmn_process_id: "p".into(),
                version: 1,
                process_definition_key: 4,
                resource_name: "p.bpmn".into(),
                tenant_id: "<default>".into(),
                ..Process::default()
            }],
            tenant_id: "<default>".into(),
            ..DeploymentRecord::default()
        };
        let response = response(&Record::event(3, DeploymentIntent::Created, created)).unwrap();
        assert_eq!(response.key, 3);
        assert_eq!(response.tenant_id, "<default>");
        assert!(matches!(
            &response.deployments[0].metadata,
            Some(deployment::Metadata::Process(p)) if p.process_definition_key == 4
        ));
        assert!(matches!(
            &response.deployments[1].metadata,
            Some(deployment::Metadata::Decision(d)) if d.decision_key == 5
        ));
    }
}
