use std::collections::HashMap;

use beeline_protocol::intent::{DeploymentIntent, ProcessIntent};
use beeline_protocol::value::{
    DeploymentRecord, DeploymentResource, ProcessMetadata, ProcessRecord,
};
use beeline_protocol::{Record, RejectionType, tenant_or_default};
use md5::{Digest, Md5};

use super::{decisions, forms, start_events};
use crate::error::ProcessingError;
use crate::model::transform_bpmn;
use crate::processing::{CommandProcessor, ProcessingContext, distribution, value_of};

/// `DEPLOYMENT CREATE`: validates every resource, gives each new or changed process its next
/// version (identical content is not a new version), and distributes the deployment to every
/// other partition. On a partition that receives a distributed deployment, the keys and
/// versions come with it.
pub(crate) struct DeploymentCreateProcessor;

impl CommandProcessor for DeploymentCreateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let deployment = value_of::<DeploymentRecord>(command)?.clone();
        if command.key > 0 {
            return apply_distributed(command, deployment, ctx);
        }
        if deployment.resources.is_empty() {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                "Expected to deploy at least one resource, but none given",
            );
            return Ok(());
        }
        let mut errors = Vec::new();
        let mut processes = Vec::new();
        let mut decision_models: Vec<(&DeploymentResource, beeline_dmn::DmnModel)> = Vec::new();
        let mut graph_owners: HashMap<String, String> = HashMap::new();
        let mut form_owners: HashMap<String, String> = HashMap::new();
        let mut parsed_forms = Vec::new();
        let mut owners: HashMap<String, String> = HashMap::new();
        for resource in &deployment.resources {
            let name = &resource.resource_name;
            let lower = name.to_ascii_lowercase();
            if lower.ends_with(".bpmn") || lower.ends_with(".xml") {
                match transform_bpmn(&resource.resource) {
                    Ok(transformed) => {
                        for process in transformed {
                            let id = process.model.bpmn_process_id.clone();
                            if let Some(other) = owners.insert(id.clone(), name.clone()) {
                                errors.push(format!(
                                    "Expected the process ids to be unique within a deployment but found a duplicated id '{id}' in the resources '{other}' and '{name}'."
                                ));
                            }
                            processes.push((id, process.model.version_tag.clone(), resource));
                        }
                    }
                    Err(message) => errors.push(format!("'{name}': {message}")),
                }
            } else if lower.ends_with(".dmn") {
                match decisions::parse(resource) {
                    Ok(model) => {
                        let id = model.id().to_string();
                        if let Some(other) = graph_owners.insert(id.clone(), name.clone()) {
                            errors.push(format!(
                                "Expected the decision requirements ids to be unique within a deployment but found a duplicated id '{id}' in the resources '{other}' and '{name}'."
                            ));
                        }
                        decision_models.push((resource, model));
                    }
                    Err(message) => errors.push(format!("'{name}': {message}")),
                }
            } else if lower.ends_with(".form") {
                match forms::parse(resource) {
                    Ok(form) => {
                        if let Some(other) = form_owners.insert(form.id.clone(), name.clone()) {
                            errors.push(format!(
                                "Expected the form ids to be unique within a deployment but found a duplicated id '{}' in the resources '{other}' and '{name}'.",
                                form.id
                            ));
                        }
                        parsed_forms.push((resource, form));
                    }
                    Err(message) => errors.push(format!("'{name}': {message}")),
                }
            } else {
                errors.push(format!(
                    "'{name}': Expected the resource to be a BPMN (.bpmn, .xml), DMN (.dmn) or form (.form) file, but its extension is unknown"
                ));
            }
        }
        if !errors.is_empty() {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                format!(
                    "Expected to deploy new resources, but encountered the following errors:\n{}",
                    errors.join("\n")
                ),
            );
            return Ok(());
        }
        let tenant = tenant_or_default(&deployment.tenant_id).to_owned();
        let deployment_key = ctx.next_key()?;
        let mut result = deployment.clone();
        result.deployment_key = deployment_key;
        result.tenant_id = tenant.clone();
        result.processes_metadata.clear();
        for (id, version_tag, resource) in processes {
            let checksum = Md5::digest(&resource.resource).to_vec();
            let latest = ctx.state().processes().latest(&tenant, &id)?;
            let duplicate = match latest {
                Some((version, key)) => ctx
                    .state()
                    .processes()
                    .get(key)?
                    .filter(|p| p.checksum == checksum && p.resource_name == resource.resource_name)
                    .map(|p| (version, key, p.deployment_key)),
                None => None,
            };
            let metadata = match duplicate {
                Some((version, key, original_deployment)) => ProcessMetadata {
                    bpmn_process_id: id,
                    version,
                    process_definition_key: key,
                    resource_name: resource.resource_name.clone(),
                    checksum,
                    is_duplicate: true,
                    tenant_id: tenant.clone(),
                    deployment_key: original_deployment,
                    version_tag: version_tag.unwrap_or_default(),
                },
                None => {
                    let key = ctx.next_key()?;
                    let version = ctx.state().processes().next_version(&tenant, &id)?;
                    let metadata = ProcessMetadata {
                        bpmn_process_id: id,
                        version,
                        process_definition_key: key,
                        resource_name: resource.resource_name.clone(),
                        checksum,
                        is_duplicate: false,
                        tenant_id: tenant.clone(),
                        deployment_key,
                        version_tag: version_tag.unwrap_or_default(),
                    };
                    ctx.append_event(
                        key,
                        ProcessIntent::Created,
                        process_record(&metadata, &resource.resource),
                    )?;
                    start_events::replace(ctx, key, latest.map(|(_, k)| k))?;
                    metadata
                }
            };
            result.processes_metadata.push(metadata);
        }
        result.decision_requirements_metadata.clear();
        result.decisions_metadata.clear();
        for (resource, model) in &decision_models {
            let (graph, graph_decisions) =
                decisions::deploy(ctx, resource, model, deployment_key, &tenant)?;
            result.decision_requirements_metadata.push(graph);
            result.decisions_metadata.extend(graph_decisions);
        }
        result.form_metadata.clear();
        for (resource, form) in &parsed_forms {
            let metadata = forms::deploy(ctx, resource, form, deployment_key, &tenant)?;
            result.form_metadata.push(metadata);
        }
        let created =
            ctx.append_event(deployment_key, DeploymentIntent::Created, result.clone())?;
        ctx.respond(created);
        distribution::distribute(ctx, deployment_key, DeploymentIntent::Create, result)
    }
}

fn process_record(metadata: &ProcessMetadata, resource: &[u8]) -> ProcessRecord {
    ProcessRecord {
        bpmn_process_id: metadata.bpmn_process_id.clone(),
        version: metadata.version,
        process_definition_key: metadata.process_definition_key,
        resource_name: metadata.resource_name.clone(),
        checksum: metadata.checksum.clone(),
        resource: resource.to_vec(),
        duplicate: metadata.is_duplicate,
        tenant_id: metadata.tenant_id.clone(),
        deployment_key: metadata.deployment_key,
        version_tag: metadata.version_tag.clone(),
    }
}

/// A deployment distributed from another partition: store what it created, with its keys,
/// and acknowledge (also when it arrives a second time).
fn apply_distributed(
    command: &Record,
    deployment: DeploymentRecord,
    ctx: &mut ProcessingContext<'_, '_>,
) -> Result<(), ProcessingError> {
    let mut already_applied = true;
    for metadata in deployment
        .processes_metadata
        .iter()
        .filter(|m| !m.is_duplicate)
    {
        if ctx
            .state()
            .processes()
            .get(metadata.process_definition_key)?
            .is_some()
        {
            continue;
        }
        already_applied = false;
        let resource = deployment
            .resources
            .iter()
            .find(|r| r.resource_name == metadata.resource_name)
            .map(|r| r.resource.clone())
            .unwrap_or_default();
        let latest = ctx
            .state()
            .processes()
            .latest(&metadata.tenant_id, &metadata.bpmn_process_id)?;
        ctx.append_event(
            metadata.process_definition_key,
            ProcessIntent::Created,
            process_record(metadata, &resource),
        )?;
        if latest.is_none_or(|(version, _)| version < metadata.version) {
            start_events::replace(ctx, metadata.process_definition_key, latest.map(|(_, k)| k))?;
        }
    }
    if forms::apply_distributed(ctx, &deployment.resources, &deployment.form_metadata)? {
        already_applied = false;
    }
    if decisions::apply_distributed(
        ctx,
        &deployment.resources,
        &deployment.decision_requirements_metadata,
        &deployment.decisions_metadata,
    )? {
        already_applied = false;
    }
    if !already_applied {
        let created = ctx.append_event(command.key, DeploymentIntent::Created, deployment)?;
        ctx.respond(created);
    }
    distribution::acknowledge(ctx, command)?;
    Ok(())
}
