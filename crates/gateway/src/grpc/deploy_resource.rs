//! `DeployResource`, and the deprecated `DeployProcess` (BPMN only, the older response).

use beeline_protocol::value::DeploymentRecord;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::deploy_resources::{self, DeployResources, Resource};
use crate::proto::{
    DecisionMetadata, DecisionRequirementsMetadata, DeployResourceRequest, DeployResourceResponse,
    Deployment, FormMetadata, ProcessMetadata, deployment,
};
#[allow(deprecated)]
use crate::proto::{DeployProcessRequest, DeployProcessResponse};

pub(super) async fn handle(
    d: &Dispatcher,
    r: DeployResourceRequest,
) -> Result<DeployResourceResponse, GatewayError> {
    let deployed = deploy_resources::run(
        d,
        DeployResources {
            resources: r
                .resources
                .into_iter()
                .map(|r| Resource {
                    name: r.name,
                    content: r.content,
                })
                .collect(),
            tenant_id: r.tenant_id,
        },
    )
    .await?;
    Ok(response(deployed.key, deployed.value))
}

/// Processes, then decisions, then decision requirements, then forms, as Zeebe lists them.
pub(crate) fn response(key: i64, deployed: DeploymentRecord) -> DeployResourceResponse {
    let mut deployments = Vec::new();
    for p in deployed.processes_metadata {
        deployments.push(deployment::Metadata::Process(ProcessMetadata {
            bpmn_process_id: p.bpmn_process_id,
            version: p.version,
            process_definition_key: p.process_definition_key,
            resource_name: p.resource_name,
            tenant_id: p.tenant_id,
        }));
    }
    for d in deployed.decisions_metadata {
        deployments.push(deployment::Metadata::Decision(DecisionMetadata {
            dmn_decision_id: d.decision_id,
            dmn_decision_name: d.decision_name,
            version: d.version,
            decision_key: d.decision_key,
            dmn_decision_requirements_id: d.decision_requirements_id,
            decision_requirements_key: d.decision_requirements_key,
            tenant_id: d.tenant_id,
        }));
    }
    for r in deployed.decision_requirements_metadata {
        deployments.push(deployment::Metadata::DecisionRequirements(
            DecisionRequirementsMetadata {
                dmn_decision_requirements_id: r.decision_requirements_id,
                dmn_decision_requirements_name: r.decision_requirements_name,
                version: r.decision_requirements_version,
                decision_requirements_key: r.decision_requirements_key,
                resource_name: r.resource_name,
                tenant_id: r.tenant_id,
            },
        ));
    }
    for f in deployed.form_metadata {
        deployments.push(deployment::Metadata::Form(FormMetadata {
            form_id: f.form_id,
            version: f.version,
            form_key: f.form_key,
            resource_name: f.resource_name,
            tenant_id: f.tenant_id,
        }));
    }
    DeployResourceResponse {
        key,
        deployments: deployments
            .into_iter()
            .map(|metadata| Deployment {
                metadata: Some(metadata),
            })
            .collect(),
        tenant_id: deployed.tenant_id,
    }
}

#[allow(deprecated)]
pub(super) async fn handle_process(
    d: &Dispatcher,
    r: DeployProcessRequest,
) -> Result<DeployProcessResponse, GatewayError> {
    if r.processes.is_empty() {
        return Err(GatewayError::InvalidArgument(
            "No processes provided".into(),
        ));
    }
    let deployed = deploy_resources::run(
        d,
        DeployResources {
            resources: r
                .processes
                .into_iter()
                .map(|p| Resource {
                    name: p.name,
                    content: p.definition,
                })
                .collect(),
            tenant_id: String::new(),
        },
    )
    .await?;
    Ok(DeployProcessResponse {
        key: deployed.key,
        processes: deployed
            .value
            .processes_metadata
            .into_iter()
            .map(|p| ProcessMetadata {
                bpmn_process_id: p.bpmn_process_id,
                version: p.version,
                process_definition_key: p.process_definition_key,
                resource_name: p.resource_name,
                tenant_id: p.tenant_id,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::{DecisionMetadata as Decision, ProcessMetadata as Process};

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
        let response = response(3, created);
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
