use serde::Serialize;

use crate::bytes::base64;

/// A deployed process definition (Zeebe's `ProcessRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessRecord {
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
    #[prost(bytes = "vec", tag = "6")]
    #[serde(serialize_with = "base64")]
    pub resource: Vec<u8>,
    #[prost(bool, tag = "7")]
    pub duplicate: bool,
    #[prost(string, tag = "8")]
    pub tenant_id: String,
    #[prost(int64, tag = "9")]
    pub deployment_key: i64,
    #[prost(string, tag = "10")]
    pub version_tag: String,
}
