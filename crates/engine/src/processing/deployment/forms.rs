//! The form side of a deployment: `.form` resources (Camunda Forms, JSON with an `id`),
//! versioned per id (identical content is not a new version), linked by user tasks through
//! `zeebe:formDefinition formId`.

use beeline_protocol::intent::FormIntent;
use beeline_protocol::value::{DeploymentResource, FormMetadata, FormRecord};
use md5::{Digest, Md5};
use serde_json::Value as Json;

use crate::error::ProcessingError;
use crate::processing::ProcessingContext;

/// What a deployment needs to know of a form.
pub(super) struct ParsedForm {
    pub id: String,
    pub version_tag: String,
}

/// Reads a form resource's id and version tag.
pub(super) fn parse(resource: &DeploymentResource) -> Result<ParsedForm, String> {
    let form: Json = serde_json::from_slice(&resource.resource)
        .map_err(|e| format!("the form is not valid JSON ({e})"))?;
    let Json::Object(form) = form else {
        return Err("Expected the form to be a JSON object".to_string());
    };
    let id = match form.get("id") {
        None | Some(Json::Null) => {
            return Err("Expected the form id to be present, but none given".to_string());
        }
        Some(Json::String(id)) if id.trim().is_empty() => {
            return Err("Expected the form id to be filled, but it is blank".to_string());
        }
        Some(Json::String(id)) => id.clone(),
        Some(_) => return Err("Expected the form id to be a string".to_string()),
    };
    let version_tag = form
        .get("versionTag")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    Ok(ParsedForm { id, version_tag })
}

/// Creates a new version of the form (FORM CREATED), or reports the existing one when the
/// content is unchanged.
pub(super) fn deploy(
    ctx: &mut ProcessingContext<'_, '_>,
    resource: &DeploymentResource,
    form: &ParsedForm,
    deployment_key: i64,
    tenant: &str,
) -> Result<FormMetadata, ProcessingError> {
    let checksum = Md5::digest(&resource.resource).to_vec();
    let latest = ctx.state().forms().latest(tenant, &form.id)?;
    if let Some((_, key)) = latest
        && let Some(existing) = ctx.state().forms().get(key)?
        && existing.checksum == checksum
        && existing.resource_name == resource.resource_name
    {
        let mut metadata = metadata(&existing);
        metadata.is_duplicate = true;
        return Ok(metadata);
    }
    let key = ctx.next_key()?;
    let record = FormRecord {
        form_id: form.id.clone(),
        version: ctx.state().forms().next_version(tenant, &form.id)?,
        form_key: key,
        resource_name: resource.resource_name.clone(),
        checksum,
        resource: resource.resource.clone(),
        tenant_id: tenant.to_string(),
        deployment_key,
        version_tag: form.version_tag.clone(),
        duplicate: false,
    };
    ctx.append_event(key, FormIntent::Created, record.clone())?;
    Ok(metadata(&record))
}

fn metadata(form: &FormRecord) -> FormMetadata {
    FormMetadata {
        form_id: form.form_id.clone(),
        version: form.version,
        form_key: form.form_key,
        resource_name: form.resource_name.clone(),
        checksum: form.checksum.clone(),
        is_duplicate: form.duplicate,
        tenant_id: form.tenant_id.clone(),
        deployment_key: form.deployment_key,
        version_tag: form.version_tag.clone(),
    }
}

/// Stores the forms a deployment distributed from another partition created. Returns whether
/// any was new here.
pub(super) fn apply_distributed(
    ctx: &mut ProcessingContext<'_, '_>,
    resources: &[DeploymentResource],
    forms: &[FormMetadata],
) -> Result<bool, ProcessingError> {
    let mut created = false;
    for form in forms.iter().filter(|f| !f.is_duplicate) {
        if ctx.state().forms().get(form.form_key)?.is_some() {
            continue;
        }
        created = true;
        let resource = resources
            .iter()
            .find(|r| r.resource_name == form.resource_name)
            .map(|r| r.resource.clone())
            .unwrap_or_default();
        ctx.append_event(
            form.form_key,
            FormIntent::Created,
            FormRecord {
                form_id: form.form_id.clone(),
                version: form.version,
                form_key: form.form_key,
                resource_name: form.resource_name.clone(),
                checksum: form.checksum.clone(),
                resource,
                tenant_id: form.tenant_id.clone(),
                deployment_key: form.deployment_key,
                version_tag: form.version_tag.clone(),
                duplicate: false,
            },
        )?;
    }
    Ok(created)
}
