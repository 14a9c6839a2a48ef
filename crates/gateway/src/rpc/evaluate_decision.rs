//! `EvaluateDecision` → `DECISION_EVALUATION EVALUATE` on the next partition in turn (every
//! partition has the deployed decisions). A failed evaluation is an answer, not an error:
//! the response names the failed decision and why.

use beeline_protocol::Record;
use beeline_protocol::intent::DecisionEvaluationIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::DecisionEvaluationRecord;

use super::value_of;
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{
    EvaluateDecisionRequest, EvaluateDecisionResponse, EvaluatedDecision, EvaluatedDecisionInput,
    EvaluatedDecisionOutput, MatchedDecisionRule,
};
use crate::routing::RoundRobin;
use crate::validate;

pub(crate) fn command(request: &EvaluateDecisionRequest) -> Result<Record, GatewayError> {
    if request.decision_id.trim().is_empty() && request.decision_key <= 0 {
        return Err(GatewayError::InvalidArgument(
            "Expected either a decisionId or a decisionKey, but none given".into(),
        ));
    }
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = validate::tenant("EvaluateDecision", &request.tenant_id)?;
    Ok(Record::command(
        NO_KEY,
        DecisionEvaluationIntent::Evaluate,
        DecisionEvaluationRecord {
            decision_key: request.decision_key,
            decision_id: request.decision_id.clone(),
            variables,
            tenant_id,
            process_definition_key: NO_KEY,
            process_instance_key: NO_KEY,
            element_instance_key: NO_KEY,
            ..DecisionEvaluationRecord::default()
        },
    ))
}

/// The EVALUATED (or FAILED) event as Zeebe's `ResponseMapper.toEvaluateDecisionResponse`
/// shapes it: the output only when nothing failed, evaluation instance keys as
/// `<evaluation key>-<position>`.
pub(crate) fn response(event: &Record) -> Result<EvaluateDecisionResponse, GatewayError> {
    let evaluation = value_of::<DecisionEvaluationRecord>(event)?;
    let evaluated_decisions = evaluation
        .evaluated_decisions
        .iter()
        .enumerate()
        .map(|(i, d)| EvaluatedDecision {
            decision_key: d.decision_key,
            decision_id: d.decision_id.clone(),
            decision_name: d.decision_name.clone(),
            decision_version: d.decision_version,
            decision_type: d.decision_type.clone(),
            decision_output: d.decision_output.clone(),
            matched_rules: d
                .matched_rules
                .iter()
                .map(|rule| MatchedDecisionRule {
                    rule_id: rule.rule_id.clone(),
                    rule_index: rule.rule_index,
                    evaluated_outputs: rule
                        .evaluated_outputs
                        .iter()
                        .map(|o| EvaluatedDecisionOutput {
                            output_id: o.output_id.clone(),
                            output_name: o.output_name.clone(),
                            output_value: o.output_value.clone(),
                        })
                        .collect(),
                })
                .collect(),
            evaluated_inputs: d
                .evaluated_inputs
                .iter()
                .map(|input| EvaluatedDecisionInput {
                    input_id: input.input_id.clone(),
                    input_name: input.input_name.clone(),
                    input_value: input.input_value.clone(),
                })
                .collect(),
            tenant_id: d.tenant_id.clone(),
            decision_evaluation_instance_key: format!("{}-{}", event.key, i + 1),
        })
        .collect();
    let failed = !evaluation.failed_decision_id.is_empty();
    Ok(EvaluateDecisionResponse {
        decision_key: evaluation.decision_key,
        decision_id: evaluation.decision_id.clone(),
        decision_name: evaluation.decision_name.clone(),
        decision_version: evaluation.decision_version,
        decision_requirements_id: evaluation.decision_requirements_id.clone(),
        decision_requirements_key: evaluation.decision_requirements_key,
        decision_output: if failed {
            String::new()
        } else {
            evaluation.decision_output.clone()
        },
        evaluated_decisions,
        failed_decision_id: evaluation.failed_decision_id.clone(),
        failure_message: evaluation.evaluation_failure_message.clone(),
        tenant_id: evaluation.tenant_id.clone(),
        decision_instance_key: event.key,
        decision_evaluation_key: event.key,
    })
}

pub(crate) async fn handle(
    d: &Dispatcher,
    request: EvaluateDecisionRequest,
) -> Result<EvaluateDecisionResponse, GatewayError> {
    static ORDER: RoundRobin = RoundRobin::new();
    d.require(DecisionEvaluationIntent::Evaluate, "evaluating decisions")?;
    let command = command(&request)?;
    let event = d
        .execute_anywhere(&ORDER, command, d.config.request_timeout)
        .await?;
    response(&event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::value::{
        EvaluatedDecision as Evaluated, EvaluatedInput, EvaluatedOutput, MatchedRule,
    };

    #[test]
    fn request_becomes_an_evaluate_command() {
        let record = command(&EvaluateDecisionRequest {
            decision_key: 0,
            decision_id: "dish".into(),
            variables: r#"{"season":"Fall"}"#.into(),
            tenant_id: String::new(),
        })
        .unwrap();
        assert_eq!(record.intent, DecisionEvaluationIntent::Evaluate.into());
        let evaluation = record.value_as::<DecisionEvaluationRecord>().unwrap();
        assert_eq!(evaluation.decision_id, "dish");
        assert_eq!(evaluation.variables, br#"{"season":"Fall"}"#);
        assert_eq!(evaluation.tenant_id, "<default>");
        let none = command(&EvaluateDecisionRequest::default()).unwrap_err();
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
        let mut event = Record::event(99, DecisionEvaluationIntent::Evaluated, evaluation);
        event.key = 99;
        let response = response(&event).unwrap();
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
        let event = Record::event(5, DecisionEvaluationIntent::Failed, evaluation);
        let response = response(&event).unwrap();
        assert_eq!(response.failed_decision_id, "dish");
        assert_eq!(response.failure_message, "no rule matched");
        assert_eq!(response.decision_output, "");
    }
}
