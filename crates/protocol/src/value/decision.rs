use serde::Serialize;

use crate::bytes::base64;

/// A deployed decision requirements graph: one DMN resource (Zeebe's
/// `DecisionRequirementsRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRequirementsRecord {
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
    #[prost(bytes = "vec", tag = "8")]
    #[serde(serialize_with = "base64")]
    pub resource: Vec<u8>,
    #[prost(bool, tag = "9")]
    pub duplicate: bool,
    #[prost(string, tag = "10")]
    pub tenant_id: String,
    #[prost(int64, tag = "11")]
    pub deployment_key: i64,
}

/// A deployed decision (Zeebe's `DecisionRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
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
    pub duplicate: bool,
    #[prost(string, tag = "8")]
    pub tenant_id: String,
    #[prost(int64, tag = "9")]
    pub deployment_key: i64,
    #[prost(string, tag = "10")]
    pub version_tag: String,
}
