//! `POST /v2/decision-definitions/evaluation`: by decision definition id (the latest version)
//! or key. `output`, inputs' and outputs' values are JSON documents in strings, as the API
//! writes them.

use axum::extract::State;
use axum::response::Response;
use beeline_protocol::value::DecisionEvaluationRecord;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::json::{self, Key, document, to_vec};
use super::problem::Problem;
use super::{Call, Gateway, Reply, answer};
use crate::operations::evaluate_decision::{
    self, DecisionSelector, EvaluateDecision, evaluation_instance_key, failed,
};

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct EvaluationRequest {
    decision_definition_id: Option<String>,
    decision_definition_key: Option<Key>,
    variables: Option<Box<RawValue>>,
    tenant_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EvaluationResponse {
    decision_definition_id: String,
    decision_definition_name: String,
    decision_definition_version: i32,
    decision_requirements_id: String,
    output: String,
    failed_decision_definition_id: String,
    failure_message: String,
    tenant_id: String,
    decision_definition_key: Key,
    decision_requirements_key: Key,
    decision_instance_key: Key,
    decision_evaluation_key: Key,
    evaluated_decisions: Vec<EvaluatedDecision>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EvaluatedDecision {
    decision_definition_id: String,
    decision_definition_name: String,
    decision_definition_version: i32,
    decision_definition_type: String,
    output: String,
    tenant_id: String,
    matched_rules: Vec<MatchedRule>,
    evaluated_inputs: Vec<EvaluatedInput>,
    decision_definition_key: Key,
    decision_evaluation_instance_key: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MatchedRule {
    rule_id: String,
    rule_index: i32,
    evaluated_outputs: Vec<EvaluatedOutput>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EvaluatedInput {
    input_id: String,
    input_name: String,
    input_value: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EvaluatedOutput {
    output_id: String,
    output_name: String,
    output_value: String,
}

fn request(body: EvaluationRequest) -> Result<EvaluateDecision, Problem> {
    let decision = match (body.decision_definition_id, body.decision_definition_key) {
        (Some(id), None) => DecisionSelector::Id(id),
        (None, Some(Key(key))) => DecisionSelector::Key(key),
        (Some(_), Some(_)) => {
            return Err(Problem::invalid(
                "Only one of [decisionDefinitionId, decisionDefinitionKey] is allowed",
            ));
        }
        (None, None) => {
            return Err(Problem::invalid(
                "At least one of [decisionDefinitionId, decisionDefinitionKey] is required",
            ));
        }
    };
    Ok(EvaluateDecision {
        decision,
        variables: document(body.variables),
        tenant_id: body.tenant_id.unwrap_or_default(),
    })
}

fn response(key: i64, evaluation: DecisionEvaluationRecord) -> EvaluationResponse {
    let failed = failed(&evaluation);
    EvaluationResponse {
        evaluated_decisions: evaluation
            .evaluated_decisions
            .into_iter()
            .enumerate()
            .map(|(i, d)| EvaluatedDecision {
                decision_definition_id: d.decision_id,
                decision_definition_name: d.decision_name,
                decision_definition_version: d.decision_version,
                decision_definition_type: d.decision_type,
                output: d.decision_output,
                tenant_id: d.tenant_id,
                matched_rules: d
                    .matched_rules
                    .into_iter()
                    .map(|rule| MatchedRule {
                        rule_id: rule.rule_id,
                        rule_index: rule.rule_index,
                        evaluated_outputs: rule
                            .evaluated_outputs
                            .into_iter()
                            .map(|o| EvaluatedOutput {
                                output_id: o.output_id,
                                output_name: o.output_name,
                                output_value: o.output_value,
                            })
                            .collect(),
                    })
                    .collect(),
                evaluated_inputs: d
                    .evaluated_inputs
                    .into_iter()
                    .map(|input| EvaluatedInput {
                        input_id: input.input_id,
                        input_name: input.input_name,
                        input_value: input.input_value,
                    })
                    .collect(),
                decision_definition_key: Key(d.decision_key),
                decision_evaluation_instance_key: evaluation_instance_key(key, i),
            })
            .collect(),
        decision_definition_id: evaluation.decision_id,
        decision_definition_name: evaluation.decision_name,
        decision_definition_version: evaluation.decision_version,
        decision_requirements_id: evaluation.decision_requirements_id,
        output: if failed {
            String::new()
        } else {
            evaluation.decision_output
        },
        failed_decision_definition_id: evaluation.failed_decision_id,
        failure_message: evaluation.evaluation_failure_message,
        tenant_id: evaluation.tenant_id,
        decision_definition_key: Key(evaluation.decision_key),
        decision_requirements_key: Key(evaluation.decision_requirements_key),
        decision_instance_key: Key(key),
        decision_evaluation_key: Key(key),
    }
}

pub(super) async fn evaluate(State(d): State<Gateway>, call: Call) -> Response {
    answer(&d, "EvaluateDecision", &call.path, async {
        let evaluation = request(json::body(&call.body)?)?;
        let evaluated = evaluate_decision::run(&d, evaluation).await?;
        Ok(Reply::Json(to_vec(&response(
            evaluated.key,
            evaluated.value,
        ))))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::{EvaluatedDecision as Evaluated, MatchedRule as Rule};

    #[test]
    fn by_id_or_key_but_not_both() {
        let by_id = request(json::body(br#"{"decisionDefinitionId":"dish"}"#).unwrap()).unwrap();
        assert_eq!(by_id.decision, DecisionSelector::Id("dish".into()));
        let by_key =
            request(json::body(br#"{"decisionDefinitionKey":"2251799813685249"}"#).unwrap())
                .unwrap();
        assert_eq!(
            by_key.decision,
            DecisionSelector::Key(2_251_799_813_685_249)
        );
        assert!(request(EvaluationRequest::default()).is_err());
    }

    #[test]
    fn the_output_is_a_json_document_in_a_string() {
        let evaluation = DecisionEvaluationRecord {
            decision_id: "dish".into(),
            decision_key: 7,
            decision_output: r#""Stew""#.into(),
            evaluated_decisions: vec![Evaluated {
                decision_id: "dish".into(),
                decision_output: r#""Stew""#.into(),
                matched_rules: vec![Rule {
                    rule_id: "r1".into(),
                    rule_index: 1,
                    evaluated_outputs: Vec::new(),
                }],
                ..Evaluated::default()
            }],
            ..DecisionEvaluationRecord::default()
        };
        let json: serde_json::Value =
            serde_json::from_slice(&to_vec(&response(99, evaluation))).unwrap();
        assert_eq!(json["output"], r#""Stew""#);
        assert_eq!(json["decisionDefinitionKey"], "7");
        assert_eq!(json["decisionEvaluationKey"], "99");
        assert_eq!(
            json["evaluatedDecisions"][0]["decisionEvaluationInstanceKey"],
            "99-1"
        );
        assert_eq!(
            json["evaluatedDecisions"][0]["matchedRules"][0]["ruleIndex"],
            1
        );
    }
}
