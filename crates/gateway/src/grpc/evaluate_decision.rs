//! `EvaluateDecision`: the EVALUATED (or FAILED) event as Zeebe's
//! `ResponseMapper.toEvaluateDecisionResponse` shapes it: the output only when nothing failed,
//! evaluation instance keys as `<evaluation key>-<position>`.

use beeline_protocol::value::DecisionEvaluationRecord;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::operations::evaluate_decision::{
    self, DecisionSelector, EvaluateDecision, evaluation_instance_key, failed,
};
use crate::proto::{
    EvaluateDecisionRequest, EvaluateDecisionResponse, EvaluatedDecision, EvaluatedDecisionInput,
    EvaluatedDecisionOutput, MatchedDecisionRule,
};

pub(crate) fn request(r: EvaluateDecisionRequest) -> Result<EvaluateDecision, GatewayError> {
    let decision = if r.decision_key > 0 {
        DecisionSelector::Key(r.decision_key)
    } else if !r.decision_id.trim().is_empty() {
        DecisionSelector::Id(r.decision_id)
    } else {
        return Err(GatewayError::InvalidArgument(
            "Expected either a decisionId or a decisionKey, but none given".into(),
        ));
    };
    Ok(EvaluateDecision {
        decision,
        variables: r.variables,
        tenant_id: r.tenant_id,
    })
}

pub(super) async fn handle(
    d: &Dispatcher,
    r: EvaluateDecisionRequest,
) -> Result<EvaluateDecisionResponse, GatewayError> {
    let evaluated = evaluate_decision::run(d, request(r)?).await?;
    Ok(response(evaluated.key, evaluated.value))
}

pub(crate) fn response(key: i64, evaluation: DecisionEvaluationRecord) -> EvaluateDecisionResponse {
    let failed = failed(&evaluation);
    let evaluated_decisions = evaluation
        .evaluated_decisions
        .into_iter()
        .enumerate()
        .map(|(i, d)| EvaluatedDecision {
            decision_key: d.decision_key,
            decision_id: d.decision_id,
            decision_name: d.decision_name,
            decision_version: d.decision_version,
            decision_type: d.decision_type,
            decision_output: d.decision_output,
            matched_rules: d
                .matched_rules
                .into_iter()
                .map(|rule| MatchedDecisionRule {
                    rule_id: rule.rule_id,
                    rule_index: rule.rule_index,
                    evaluated_outputs: rule
                        .evaluated_outputs
                        .into_iter()
                        .map(|o| EvaluatedDecisionOutput {
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
                .map(|input| EvaluatedDecisionInput {
                    input_id: input.input_id,
                    input_name: input.input_name,
                    input_value: input.input_value,
                })
                .collect(),
            tenant_id: d.tenant_id,
            decision_evaluation_instance_key: evaluation_instance_key(key, i),
        })
        .collect();
    EvaluateDecisionResponse {
        decision_key: evaluation.decision_key,
        decision_id: evaluation.decision_id,
        decision_name: evaluation.decision_name,
        decision_version: evaluation.decision_version,
        decision_requirements_id: evaluation.decision_requirements_id,
        decision_requirements_key: evaluation.decision_requirements_key,
        decision_output: if failed {
            String::new()
        } else {
            evaluation.decision_output
        },
        evaluated_decisions,
        failed_decision_id: evaluation.failed_decision_id,
        failure_message: evaluation.evaluation_failure_message,
        tenant_id: evaluation.tenant_id,
        decision_instance_key: key,
        decision_evaluation_key: key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::{
        EvaluatedDecision as Evaluated, EvaluatedInput, EvaluatedOutput, MatchedRule,
    };

    #[test]
    fn the_key_wins_over_the_id() {
        let by_key = request(EvaluateDecisionRequest {
            decision_key: 7,
            decision_id: "dish".into(),
            ..EvaluateDecisionRequest::default()
        })
        .unwrap();
        assert_eq!(by_key.decision, DecisionSelector::Key(7));
        let none = request(EvaluateDecisionRequest::default()).unwrap_err();
        assert!(none.to_string().contains("decisionId"));
    }

    #[test]
    fn evaluated_event_becomes_the_response() {
        let evaluation = DecisionEvaluationRecord {
            decision_key: 7,
            decision_id: "dish".into(),
            decision_name: "Dish".into(),
            decision_version: 1,
            decision_output: r#""Stew""#.into(),
            decision_requirements_id: "drg".into(),
            decision_requirements_key: 6,
            tenant_id: "<default>".into(),
            evaluated_decisions: vec![Evaluated {
                decision_id: "dish".into(),
                decision_key: 7,
                decision_type: "DECISION_TABLE".into(),
                decision_output: r#""Stew""#.into(),
                evaluated_inputs: vec![EvaluatedInput {
                    input_id: "in".into(),
                    input_name: "Season".into(),
                    input_value: r#""Fall""#.into(),
                }],
                matched_rules: vec![MatchedRule {
                    rule_id: "r2".into(),
                    rule_index: 2,
                    evaluated_outputs: vec![EvaluatedOutput {
                        output_id: "out".into(),
                        output_name: "Dish".into(),
                        output_value: r#""Stew""#.into(),
                    }],
                }],
                ..Evaluated::default()
            }],
            ..DecisionEvaluationRecord::default()
        };
        let response = response(99, evaluation);
        assert_eq!(response.decision_output, r#""Stew""#);
        assert_eq!(response.decision_evaluation_key, 99);
        assert_eq!(response.decision_instance_key, 99);
        assert_eq!(response.decision_requirements_key, 6);
        let evaluated = &response.evaluated_decisions[0];
        assert_eq!(evaluated.decision_evaluation_instance_key, "99-1");
        assert_eq!(evaluated.matched_rules[0].rule_index, 2);
        assert_eq!(
            evaluated.matched_rules[0].evaluated_outputs[0].output_name,
            "Dish"
        );
        assert_eq!(evaluated.evaluated_inputs[0].input_value, r#""Fall""#);
    }

    #[test]
    fn a_failed_evaluation_names_the_failed_decision() {
        let evaluation = DecisionEvaluationRecord {
            decision_id: "dish".into(),
            decision_output: "null".into(),
            failed_decision_id: "dish".into(),
            evaluation_failure_message: "no rule matched".into(),
            ..DecisionEvaluationRecord::default()
        };
        let response = response(5, evaluation);
        assert_eq!(response.failed_decision_id, "dish");
        assert_eq!(response.failure_message, "no rule matched");
        assert_eq!(response.decision_output, "");
    }
}
