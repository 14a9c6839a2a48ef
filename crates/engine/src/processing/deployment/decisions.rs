//! The DMN side of a deployment: a decision requirements graph and its decisions, versioned
//! per id (identical content is not a new version).

use beeline_dmn::DmnModel;
use beeline_protocol::intent::{DecisionIntent, DecisionRequirementsIntent};
use beeline_protocol::value::{
    DecisionMetadata, DecisionRecord, DecisionRequirementsMetadata, DecisionRequirementsRecord,
    DeploymentResource,
};
use md5::{Digest, Md5};

use crate::error::ProcessingError;
use crate::processing::ProcessingContext;

/// Parses a DMN resource for deployment.
pub(super) fn parse(resource: &DeploymentResource) -> Result<DmnModel, String> {
    let text = std::str::from_utf8(&resource.resource)
        .map_err(|e| format!("the DMN file is not UTF-8 ({e})"))?;
    let model = DmnModel::parse(text).map_err(|e| e.to_string())?;
    if model.decisions().is_empty() {
        return Err("Expected the decision requirements graph to contain at least one decision, but none found".into());
    }
    Ok(model)
}

/// Creates the graph and its decisions (new versions), or reports the existing ones when the
/// content is unchanged.
pub(super) fn deploy(
    ctx: &mut ProcessingContext<'_, '_>,
    resource: &DeploymentResource,
    model: &DmnModel,
    deployment_key: i64,
    tenant: &str,
) -> Result<(DecisionRequirementsMetadata, Vec<DecisionMetadata>), ProcessingError> {
    let checksum = Md5::digest(&resource.resource).to_vec();
    let id = model.id().to_string();
    let latest = ctx.state().decisions().latest_requirements(tenant, &id)?;
    if let Some((version, key)) = latest
        && let Some(existing) = ctx.state().decisions().requirements(key)?
        && existing.checksum == checksum
        && existing.resource_name == resource.resource_name
    {
        let mut decisions = Vec::new();
        for info in model.decisions() {
            if let Some(decision) = ctx.state().decisions().in_requirements(key, &info.id)? {
                decisions.push(decision_metadata(&decision, true));
            }
        }
        let mut metadata = requirements_metadata(&existing);
        metadata.decision_requirements_version = version;
        metadata.is_duplicate = true;
        return Ok((metadata, decisions));
    }
    let key = ctx.next_key()?;
    let version = ctx
        .state()
        .decisions()
        .next_requirements_version(tenant, &id)?;
    let requirements = DecisionRequirementsRecord {
        decision_requirements_id: id,
        decision_requirements_name: model.name().to_string(),
        decision_requirements_version: version,
        decision_requirements_key: key,
        namespace: model.namespace().to_string(),
        resource_name: resource.resource_name.clone(),
        checksum,
        resource: resource.resource.clone(),
        duplicate: false,
        tenant_id: tenant.to_string(),
        deployment_key,
    };
    ctx.append_event(
        key,
        DecisionRequirementsIntent::Created,
        requirements.clone(),
    )?;
    let mut decisions = Vec::new();
    for info in model.decisions() {
        let decision_key = ctx.next_key()?;
        let version = ctx.state().decisions().next_version(tenant, &info.id)?;
        let decision = DecisionRecord {
            decision_id: info.id.clone(),
            decision_name: info.name.clone(),
            version,
            decision_key,
            decision_requirements_id: requirements.decision_requirements_id.clone(),
            decision_requirements_key: key,
            duplicate: false,
            tenant_id: tenant.to_string(),
            deployment_key,
            version_tag: String::new(),
        };
        ctx.append_event(decision_key, DecisionIntent::Created, decision.clone())?;
        decisions.push(decision_metadata(&decision, false));
    }
    Ok((requirements_metadata(&requirements), decisions))
}

/// A distributed deployment's graph and decisions, with the keys they were given.
pub(super) fn apply_distributed(
    ctx: &mut ProcessingContext<'_, '_>,
    resources: &[DeploymentResource],
    requirements: &[DecisionRequirementsMetadata],
    decisions: &[DecisionMetadata],
) -> Result<bool, ProcessingError> {
    let mut applied = false;
    for metadata in requirements.iter().filter(|m| !m.is_duplicate) {
        if ctx
            .state()
            .decisions()
            .requirements(metadata.decision_requirements_key)?
            .is_some()
        {
            continue;
        }
        applied = true;
        let resource = resources
            .iter()
            .find(|r| r.resource_name == metadata.resource_name)
            .map(|r| r.resource.clone())
            .unwrap_or_default();
        ctx.append_event(
            metadata.decision_requirements_key,
            DecisionRequirementsIntent::Created,
            DecisionRequirementsRecord {
                decision_requirements_id: metadata.decision_requirements_id.clone(),
                decision_requirements_name: metadata.decision_requirements_name.clone(),
                decision_requirements_version: metadata.decision_requirements_version,
                decision_requirements_key: metadata.decision_requirements_key,
                namespace: metadata.namespace.clone(),
                resource_name: metadata.resource_name.clone(),
                checksum: metadata.checksum.clone(),
                resource,
                duplicate: false,
                tenant_id: metadata.tenant_id.clone(),
                deployment_key: metadata.deployment_key,
            },
        )?;
        for decision in decisions
            .iter()
            .filter(|d| d.decision_requirements_key == metadata.decision_requirements_key)
        {
            ctx.append_event(
                decision.decision_key,
                DecisionIntent::Created,
                DecisionRecord {
                    decision_id: decision.decision_id.clone(),
                    decision_name: decision.decision_name.clone(),
                    version: decision.version,
                    decision_key: decision.decision_key,
                    decision_requirements_id: decision.decision_requirements_id.clone(),
                    decision_requirements_key: decision.decision_requirements_key,
                    duplicate: false,
                    tenant_id: decision.tenant_id.clone(),
                    deployment_key: decision.deployment_key,
                    version_tag: decision.version_tag.clone(),
                },
            )?;
        }
    }
    Ok(applied)
}

fn requirements_metadata(record: &DecisionRequirementsRecord) -> DecisionRequirementsMetadata {
    DecisionRequirementsMetadata {
        decision_requirements_id: record.decision_requirements_id.clone(),
        decision_requirements_name: record.decision_requirements_name.clone(),
        decision_requirements_version: record.decision_requirements_version,
        decision_requirements_key: record.decision_requirements_key,
        namespace: record.namespace.clone(),
        resource_name: record.resource_name.clone(),
        checksum: record.checksum.clone(),
        is_duplicate: false,
        tenant_id: record.tenant_id.clone(),
        deployment_key: record.deployment_key,
    }
}

fn decision_metadata(record: &DecisionRecord, duplicate: bool) -> DecisionMetadata {
    DecisionMetadata {
        decision_id: record.decision_id.clone(),
        decision_name: record.decision_name.clone(),
        version: record.version,
        decision_key: record.decision_key,
        decision_requirements_id: record.decision_requirements_id.clone(),
        decision_requirements_key: record.decision_requirements_key,
        is_duplicate: duplicate,
        tenant_id: record.tenant_id.clone(),
        deployment_key: record.deployment_key,
        version_tag: record.version_tag.clone(),
    }
}
