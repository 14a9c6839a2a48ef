//! `beeline deploy FILE...`: DeployResource with every file as one deployment.

use std::path::PathBuf;
use std::time::Duration;

use beeline_gateway_protocol::proto::deployment::Metadata;
use beeline_gateway_protocol::proto::{DeployResourceRequest, DeployResourceResponse, Resource};
use serde_json::{Value, json};

use crate::connection::{Connection, Error};
use crate::output::{Reply, int64, table};

#[derive(Debug, clap::Args)]
pub struct DeployArgs {
    /// BPMN (.bpmn), DMN (.dmn) and form (.form) files; each is named by its file name
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub connection: Connection,
}

pub async fn run(args: DeployArgs) -> Result<Reply, Error> {
    let resources = args
        .files
        .iter()
        .map(|path| {
            let content = std::fs::read(path)
                .map_err(|e| Error::Usage(format!("cannot read {}: {e}", path.display())))?;
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .ok_or_else(|| Error::Usage(format!("{} is not a file", path.display())))?;
            Ok(Resource { name, content })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let request = DeployResourceRequest {
        resources,
        tenant_id: String::new(),
    };
    let mut client = args.connection.connect().await?;
    let response = args
        .connection
        .call(request, Duration::ZERO, |r| client.deploy_resource(r))
        .await?;
    Ok(Reply {
        text: text(&response),
        json: to_json(&response),
    })
}

fn text(response: &DeployResourceResponse) -> String {
    let count = response.deployments.len();
    let mut text = format!(
        "deployed {count} resource{} as deployment {}\n",
        if count == 1 { "" } else { "s" },
        response.key
    );
    let rows: Vec<Vec<String>> = response
        .deployments
        .iter()
        .filter_map(|deployment| deployment.metadata.as_ref())
        .map(|metadata| {
            let (kind, id, version, key, source) = match metadata {
                Metadata::Process(p) => (
                    "process",
                    &p.bpmn_process_id,
                    p.version,
                    p.process_definition_key,
                    p.resource_name.clone(),
                ),
                Metadata::Decision(d) => (
                    "decision",
                    &d.dmn_decision_id,
                    d.version,
                    d.decision_key,
                    format!("in {}", d.dmn_decision_requirements_id),
                ),
                Metadata::DecisionRequirements(d) => (
                    "decision requirements",
                    &d.dmn_decision_requirements_id,
                    d.version,
                    d.decision_requirements_key,
                    d.resource_name.clone(),
                ),
                Metadata::Form(f) => (
                    "form",
                    &f.form_id,
                    f.version,
                    f.form_key,
                    f.resource_name.clone(),
                ),
            };
            vec![
                format!("  {kind}"),
                id.clone(),
                format!("version {version}"),
                format!("key {key}"),
                source,
            ]
        })
        .collect();
    text.push_str(&table(&rows));
    text
}

fn to_json(response: &DeployResourceResponse) -> Value {
    let deployments: Vec<Value> = response
        .deployments
        .iter()
        .filter_map(|deployment| deployment.metadata.as_ref())
        .map(|metadata| match metadata {
            Metadata::Process(p) => json!({ "process": {
                "bpmnProcessId": p.bpmn_process_id,
                "version": p.version,
                "processDefinitionKey": int64(p.process_definition_key),
                "resourceName": p.resource_name,
                "tenantId": p.tenant_id,
            }}),
            Metadata::Decision(d) => json!({ "decision": {
                "dmnDecisionId": d.dmn_decision_id,
                "dmnDecisionName": d.dmn_decision_name,
                "version": d.version,
                "decisionKey": int64(d.decision_key),
                "dmnDecisionRequirementsId": d.dmn_decision_requirements_id,
                "decisionRequirementsKey": int64(d.decision_requirements_key),
                "tenantId": d.tenant_id,
            }}),
            Metadata::DecisionRequirements(d) => json!({ "decisionRequirements": {
                "dmnDecisionRequirementsId": d.dmn_decision_requirements_id,
                "dmnDecisionRequirementsName": d.dmn_decision_requirements_name,
                "version": d.version,
                "decisionRequirementsKey": int64(d.decision_requirements_key),
                "resourceName": d.resource_name,
                "tenantId": d.tenant_id,
            }}),
            Metadata::Form(f) => json!({ "form": {
                "formId": f.form_id,
                "version": f.version,
                "formKey": int64(f.form_key),
                "resourceName": f.resource_name,
                "tenantId": f.tenant_id,
            }}),
        })
        .collect();
    json!({
        "key": int64(response.key),
        "deployments": deployments,
        "tenantId": response.tenant_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_gateway_protocol::proto::{DecisionMetadata, Deployment, ProcessMetadata};

    fn response() -> DeployResourceResponse {
        DeployResourceResponse {
            key: 2251799813685249,
            deployments: vec![
                Deployment {
                    metadata: Some(Metadata::Process(ProcessMetadata {
                        bpmn_process_id: "order".into(),
                        version: 2,
                        process_definition_key: 2251799813685250,
                        resource_name: "order.bpmn".into(),
                        tenant_id: "<default>".into(),
                    })),
                },
                Deployment {
                    metadata: Some(Metadata::Decision(DecisionMetadata {
                        dmn_decision_id: "shipping-cost".into(),
                        dmn_decision_name: "Shipping cost".into(),
                        version: 1,
                        decision_key: 2251799813685252,
                        dmn_decision_requirements_id: "shipping".into(),
                        decision_requirements_key: 2251799813685251,
                        tenant_id: "<default>".into(),
                    })),
                },
            ],
            tenant_id: "<default>".into(),
        }
    }

    #[test]
    fn a_person_reads_one_line_per_resource() {
        assert_eq!(
            text(&response()),
            "deployed 2 resources as deployment 2251799813685249\n\
             \x20 process   order          version 2  key 2251799813685250  order.bpmn\n\
             \x20 decision  shipping-cost  version 1  key 2251799813685252  in shipping\n"
        );
    }

    #[test]
    fn a_script_reads_protobufs_json_mapping() {
        let json = to_json(&response());
        assert_eq!(json["key"], "2251799813685249");
        assert_eq!(json["deployments"][0]["process"]["bpmnProcessId"], "order");
        assert_eq!(json["deployments"][0]["process"]["version"], 2);
        assert_eq!(
            json["deployments"][1]["decision"]["decisionRequirementsKey"],
            "2251799813685251"
        );
        assert_eq!(json["tenantId"], "<default>");
    }
}
