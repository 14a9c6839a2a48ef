//! `POST /v2/deployments`: `multipart/form-data` with one or more `resources` parts (each
//! part's file name is the resource's name) and an optional `tenantId` part.

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use beeline_protocol::value::DeploymentRecord;
use serde::Serialize;

use super::json::{Key, to_vec};
use super::problem::Problem;
use super::{Gateway, Reply, answer};
use crate::operations::deploy_resources::{self, DeployResources, Resource};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeploymentResponse {
    deployment_key: Key,
    tenant_id: String,
    deployments: Vec<Deployed>,
}

/// One deployed resource: exactly one of the fields is set.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct Deployed {
    #[serde(skip_serializing_if = "Option::is_none")]
    process_definition: Option<ProcessDefinition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision_definition: Option<DecisionDefinition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision_requirements: Option<DecisionRequirements>,
    #[serde(skip_serializing_if = "Option::is_none")]
    form: Option<Form>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProcessDefinition {
    process_definition_id: String,
    process_definition_version: i32,
    resource_name: String,
    tenant_id: String,
    process_definition_key: Key,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DecisionDefinition {
    decision_definition_id: String,
    version: i32,
    name: String,
    tenant_id: String,
    decision_requirements_id: String,
    decision_definition_key: Key,
    decision_requirements_key: Key,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DecisionRequirements {
    decision_requirements_id: String,
    version: i32,
    decision_requirements_name: String,
    tenant_id: String,
    resource_name: String,
    decision_requirements_key: Key,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Form {
    form_id: String,
    version: i32,
    resource_name: String,
    tenant_id: String,
    form_key: Key,
}

/// Processes, then decisions, then decision requirements, then forms, as Zeebe lists them.
fn response(key: i64, deployed: DeploymentRecord) -> DeploymentResponse {
    let mut deployments = Vec::new();
    for p in deployed.processes_metadata {
        deployments.push(Deployed {
            process_definition: Some(ProcessDefinition {
                process_definition_id: p.bpmn_process_id,
                process_definition_version: p.version,
                resource_name: p.resource_name,
                tenant_id: p.tenant_id,
                process_definition_key: Key(p.process_definition_key),
            }),
            ..Deployed::default()
        });
    }
    for d in deployed.decisions_metadata {
        deployments.push(Deployed {
            decision_definition: Some(DecisionDefinition {
                decision_definition_id: d.decision_id,
                version: d.version,
                name: d.decision_name,
                tenant_id: d.tenant_id,
                decision_requirements_id: d.decision_requirements_id,
                decision_definition_key: Key(d.decision_key),
                decision_requirements_key: Key(d.decision_requirements_key),
            }),
            ..Deployed::default()
        });
    }
    for r in deployed.decision_requirements_metadata {
        deployments.push(Deployed {
            decision_requirements: Some(DecisionRequirements {
                decision_requirements_id: r.decision_requirements_id,
                version: r.decision_requirements_version,
                decision_requirements_name: r.decision_requirements_name,
                tenant_id: r.tenant_id,
                resource_name: r.resource_name,
                decision_requirements_key: Key(r.decision_requirements_key),
            }),
            ..Deployed::default()
        });
    }
    for f in deployed.form_metadata {
        deployments.push(Deployed {
            form: Some(Form {
                form_id: f.form_id,
                version: f.version,
                resource_name: f.resource_name,
                tenant_id: f.tenant_id,
                form_key: Key(f.form_key),
            }),
            ..Deployed::default()
        });
    }
    DeploymentResponse {
        deployment_key: Key(key),
        tenant_id: deployed.tenant_id,
        deployments,
    }
}

/// The resources and tenant of a multipart body.
async fn read(mut multipart: Multipart) -> Result<DeployResources, Problem> {
    let mut request = DeployResources::default();
    let unreadable = |e: axum::extract::multipart::MultipartError| {
        Problem::new(
            e.status(),
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                "PAYLOAD_TOO_LARGE"
            } else {
                "INVALID_ARGUMENT"
            },
            format!("The multipart body cannot be read: {}", e.body_text()),
        )
    };
    while let Some(field) = multipart.next_field().await.map_err(unreadable)? {
        match field.name() {
            Some("resources") => {
                let name = field.file_name().unwrap_or_default().to_owned();
                let content = field.bytes().await.map_err(unreadable)?;
                request.resources.push(Resource {
                    name,
                    content: content.to_vec(),
                });
            }
            Some("tenantId") => {
                request.tenant_id = field.text().await.map_err(unreadable)?;
            }
            // Parts of later API versions, ignored as unknown JSON properties are.
            _ => {}
        }
    }
    Ok(request)
}

pub(super) async fn create(State(d): State<Gateway>, uri: Uri, request: Request) -> Response {
    answer(&d, "DeployResource", uri.path(), async {
        let multipart = Multipart::from_request(request, &d)
            .await
            .map_err(|rejection| {
                Problem::invalid(format!(
                    "Expected a multipart/form-data body with one or more 'resources' parts: {}",
                    rejection.body_text()
                ))
            })?;
        let deployed = deploy_resources::run(&d, read(multipart).await?).await?;
        Ok(Reply::Json(to_vec(&response(deployed.key, deployed.value))))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::{DecisionMetadata, ProcessMetadata};

    #[test]
    fn each_deployed_resource_names_its_kind() {
        let deployed = DeploymentRecord {
            processes_metadata: vec![ProcessMetadata {
                bpmn_process_id: "order".into(),
                version: 1,
                process_definition_key: 2_251_799_813_685_249,
                resource_name: "order.bpmn".into(),
                tenant_id: "<default>".into(),
                ..ProcessMetadata::default()
            }],
            decisions_metadata: vec![DecisionMetadata {
                decision_id: "dish".into(),
                decision_key: 5,
                ..DecisionMetadata::default()
            }],
            tenant_id: "<default>".into(),
            ..DeploymentRecord::default()
        };
        let json: serde_json::Value =
            serde_json::from_slice(&to_vec(&response(3, deployed))).unwrap();
        assert_eq!(json["deploymentKey"], "3");
        assert_eq!(
            json["deployments"][0],
            serde_json::json!({"processDefinition": {
                "processDefinitionId": "order",
                "processDefinitionVersion": 1,
                "resourceName": "order.bpmn",
                "tenantId": "<default>",
                "processDefinitionKey": "2251799813685249"
            }})
        );
        assert_eq!(
            json["deployments"][1]["decisionDefinition"]["decisionDefinitionKey"],
            "5"
        );
    }
}
