use serde::Serialize;

/// A decision evaluated, by a business rule task or the `EvaluateDecision` RPC (Zeebe's
/// `DecisionEvaluationRecord`). JSON values (outputs, inputs) are kept as their JSON text, as
/// Zeebe exports them.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionEvaluationRecord {
    #[prost(int64, tag = "1")]
    pub decision_key: i64,
    #[prost(string, tag = "2")]
    pub decision_id: String,
    #[prost(string, tag = "3")]
    pub decision_name: String,
    #[prost(int32, tag = "4")]
    pub decision_version: i32,
    #[prost(string, tag = "5")]
    pub decision_type: String,
    #[prost(string, tag = "6")]
    pub decision_output: String,
    /// For EVALUATE: the variables to evaluate with.
    #[prost(bytes = "vec", tag = "7")]
    #[serde(serialize_with = "crate::document::serialize")]
    pub variables: Vec<u8>,
    #[prost(string, tag = "8")]
    pub bpmn_process_id: String,
    #[prost(int64, tag = "9")]
    pub process_definition_key: i64,
    #[prost(int64, tag = "10")]
    pub process_instance_key: i64,
    #[prost(string, tag = "11")]
    pub element_id: String,
    #[prost(int64, tag = "12")]
    pub element_instance_key: i64,
    #[prost(message, repeated, tag = "13")]
    pub evaluated_decisions: Vec<EvaluatedDecision>,
    #[prost(string, tag = "14")]
    pub evaluation_failure_message: String,
    #[prost(string, tag = "15")]
    pub failed_decision_id: String,
    #[prost(string, tag = "16")]
    pub tenant_id: String,
    #[prost(int64, tag = "17")]
    pub decision_requirements_key: i64,
    #[prost(string, tag = "18")]
    pub decision_requirements_id: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluatedDecision {
    #[prost(string, tag = "1")]
    pub decision_id: String,
    #[prost(string, tag = "2")]
    pub decision_name: String,
    #[prost(int64, tag = "3")]
    pub decision_key: i64,
    #[prost(int32, tag = "4")]
    pub decision_version: i32,
    #[prost(string, tag = "5")]
    pub decision_type: String,
    #[prost(string, tag = "6")]
    pub decision_output: String,
    #[prost(message, repeated, tag = "7")]
    pub evaluated_inputs: Vec<EvaluatedInput>,
    #[prost(message, repeated, tag = "8")]
    pub matched_rules: Vec<MatchedRule>,
    #[prost(string, tag = "9")]
    pub tenant_id: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluatedInput {
    #[prost(string, tag = "1")]
    pub input_id: String,
    #[prost(string, tag = "2")]
    pub input_name: String,
    #[prost(string, tag = "3")]
    pub input_value: String,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedRule {
    #[prost(string, tag = "1")]
    pub rule_id: String,
    #[prost(int32, tag = "2")]
    pub rule_index: i32,
    #[prost(message, repeated, tag = "3")]
    pub evaluated_outputs: Vec<EvaluatedOutput>,
}

#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluatedOutput {
    #[prost(string, tag = "1")]
    pub output_id: String,
    #[prost(string, tag = "2")]
    pub output_name: String,
    #[prost(string, tag = "3")]
    pub output_value: String,
}
