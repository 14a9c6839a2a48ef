use std::collections::BTreeMap;

use serde::Serialize;

use crate::bytes::base64;

/// A user task the engine manages (a Camunda user task, `zeebe:userTask`), Zeebe's
/// `UserTaskRecord`: who may work on it, when it is due, its form, and, on completion, the
/// variables it completes with.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserTaskRecord {
    #[prost(int64, tag = "1")]
    pub user_task_key: i64,
    #[prost(string, tag = "2")]
    pub assignee: String,
    #[prost(string, repeated, tag = "3")]
    pub candidate_groups_list: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    pub candidate_users_list: Vec<String>,
    /// ISO 8601, as Zeebe prints a zoned date-time, or empty.
    #[prost(string, tag = "5")]
    pub due_date: String,
    #[prost(string, tag = "6")]
    pub follow_up_date: String,
    /// The key of the linked form, or -1.
    #[prost(int64, tag = "7")]
    pub form_key: i64,
    /// Which attributes the transition changes (`assignee`, `candidateGroupsList`, ...).
    #[prost(string, repeated, tag = "8")]
    pub changed_attributes: Vec<String>,
    #[prost(bytes = "vec", tag = "9")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    /// What the user did (`complete`, `assign`, `claim`, `update`, or the client's word).
    #[prost(string, tag = "10")]
    pub action: String,
    #[prost(string, tag = "11")]
    pub external_form_reference: String,
    #[prost(btree_map = "string, string", tag = "12")]
    pub custom_headers: BTreeMap<String, String>,
    #[prost(int64, tag = "13")]
    pub creation_timestamp: i64,
    #[prost(string, tag = "14")]
    pub element_id: String,
    #[prost(int64, tag = "15")]
    pub element_instance_key: i64,
    #[prost(string, tag = "16")]
    pub bpmn_process_id: String,
    #[prost(int32, tag = "17")]
    pub process_definition_version: i32,
    #[prost(int64, tag = "18")]
    pub process_definition_key: i64,
    #[prost(int64, tag = "19")]
    pub process_instance_key: i64,
    #[prost(string, tag = "20")]
    pub tenant_id: String,
    /// 0 to 100; 50 unless the model says otherwise.
    #[prost(int32, tag = "21")]
    pub priority: i32,
    #[prost(string, tag = "22")]
    pub denied_reason: String,
}

/// A deployed form (Zeebe's `FormRecord`).
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FormRecord {
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
    #[prost(bytes = "vec", tag = "6")]
    #[serde(serialize_with = "base64")]
    pub resource: Vec<u8>,
    #[prost(string, tag = "7")]
    pub tenant_id: String,
    #[prost(int64, tag = "8")]
    pub deployment_key: i64,
    #[prost(string, tag = "9")]
    pub version_tag: String,
    #[prost(bool, tag = "10")]
    pub duplicate: bool,
}
