use serde::Serialize;

use crate::bytes::base64;

/// A deployment: resources in, metadata of what was deployed out (Zeebe's `DeploymentRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentRecord {
    #[prost(message, repeated, tag = "1")]
    pub resources: Vec<DeploymentResource>,
    #[prost(message, repeated, tag = "2")]
    pub processes_metadata: Vec<ProcessMetadata>,
    #[prost(message, repeated, tag = "3")]
    pub decision_requirements_metadata: Vec<DecisionRequirementsMetadata>,
    #[prost(message, repeated, tag = "4")]
    pub decisions_metadata: Vec<DecisionMetadata>,
    #[prost(message, repeated, tag = "5")]
    pub form_metadata: Vec<FormMetadata>,
    #[prost(string, tag = "6")]
    pub tenant_id: String,
    #[prost(int64, tag = "7")]
    pub deployment_key: i64,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentResource {
    #[prost(bytes = "vec", tag = "1")]
    #[serde(serialize_with = "base64")]
    pub resource: Vec<u8>,
    #[prost(string, tag = "2")]
    pub resource_name: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessMetadata {
    #[prost(string, tag = "1")]
    pub bpmn_process_id: String,
    #[prost(int32, tag = "2")]
    pub version: i32,
    #[prost(int64, tag = "3")]
    pub process_definition_key: i64,
    #[prost(string, tag = "4")]
    pub resource_name: String,
    #[prost(bytes = "vec", tag = "5")]
    #[serde(serialize_with = "base64")]
    pub checksum: Vec<u8>,
    #[prost(bool, tag = "6")]
    #[serde(rename = "isDuplicate")]
    pub is_duplicate: bool,
    #[prost(string, tag = "7")]
    pub tenant_id: String,
    #[prost(int64, tag = "8")]
    pub deployment_key: i64,
    #[prost(string, tag = "9")]
    pub version_tag: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRequirementsMetadata {
    #[prost(string, tag = "1")]
    pub decision_requirements_id: String,
    #[prost(string, tag = "2")]
    pub decision_requirements_name: String,
    #[prost(int32, tag = "3")]
    pub decision_requirements_version: i32,
    #[prost(int64, tag = "4")]
    pub decision_requirements_key: i64,
    #[prost(string, tag = "5")]
    pub namespace: String,
    #[prost(string, tag = "6")]
    pub resource_name: String,
    #[prost(bytes = "vec", tag = "7")]
    #[serde(serialize_with = "base64")]
    pub checksum: Vec<u8>,
    #[prost(bool, tag = "8")]
    #[serde(rename = "isDuplicate")]
    pub is_duplicate: bool,
    #[prost(string, tag = "9")]
    pub tenant_id: String,
    #[prost(int64, tag = "10")]
    pub deployment_key: i64,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionMetadata {
    #[prost(string, tag = "1")]
    pub decision_id: String,
    #[prost(string, tag = "2")]
    pub decision_name: String,
    #[prost(int32, tag = "3")]
    pub version: i32,
    #[prost(int64, tag = "4")]
    pub decision_key: i64,
    #[prost(string, tag = "5")]
    pub decision_requirements_id: String,
    #[prost(int64, tag = "6")]
    pub decision_requirements_key: i64,
    #[prost(bool, tag = "7")]
    #[serde(rename = "isDuplicate")]
    pub is_duplicate: bool,
    #[prost(string, tag = "8")]
    pub tenant_id: String,
    #[prost(int64, tag = "9")]
    pub deployment_key: i64,
    #[prost(string, tag = "10")]
    pub version_tag: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FormMetadata {
    #[prost(string, tag = "1")]
    pub form_id: String,
    #[prost(int32, tag = "2")]
    pub version: i32,
    #[prost(int64, tag = "3")]
    pub form_key: i64,
    #[prost(string, tag = "4")]
    pub resource_name: String,
    #[prost(bytes = "vec", tag = "5")]
    #[serde(serialize_with = "base64")]
    pub checksum: Vec<u8>,
    #[prost(bool, tag = "6")]
    #[serde(rename = "isDuplicate")]
    pub is_duplicate: bool,
    #[prost(string, tag = "7")]
    pub tenant_id: String,
    #[prost(int64, tag = "8")]
    pub deployment_key: i64,
    #[prost(string, tag = "9")]
    pub version_tag: String,
}
