//! Evaluating deployed decisions: shared by business rule tasks and the `EvaluateDecision`
//! command.

mod evaluate;

use beeline_feel::{Clock, EvalContext, Value};
use beeline_protocol::intent::DecisionEvaluationIntent;
use beeline_protocol::value::{
    DecisionEvaluationRecord, DecisionRecord, EvaluatedDecision, EvaluatedInput, EvaluatedOutput,
    MatchedRule,
};

use super::Processors;
use crate::error::ProcessingError;
use crate::expression::ScopeVariables;
use crate::state::EngineState;

pub(super) fn register(processors: &mut Processors) {
    processors.register(
        DecisionEvaluationIntent::Evaluate,
        evaluate::DecisionEvaluateProcessor,
    );
}

fn json_text(value: &Value) -> String {
    value.to_json().to_string()
}

/// Evaluates `decision` with the given variables at `now`. The record says whether it failed
/// (`failed_decision_id`, `evaluation_failure_message`).
pub(crate) fn evaluate_decision(
    state: &EngineState<'_>,
    decision: &DecisionRecord,
    variables: &ScopeVariables<'_, '_>,
    now: i64,
) -> Result<DecisionEvaluationRecord, ProcessingError> {
    let model = state
        .decisions()
        .model(decision.decision_requirements_key)?
        .ok_or_else(|| {
            ProcessingError::Internal(format!(
                "decision requirements {} of decision '{}' are not deployed",
                decision.decision_requirements_key, decision.decision_id
            ))
        })?;
    let context = EvalContext::new(variables).with_clock(Clock::from_epoch_millis(now));
    let evaluation = model.evaluate_with(&decision.decision_id, &context);
    let mut evaluated = Vec::new();
    for step in &evaluation.evaluated_decisions {
        let record = state
            .decisions()
            .in_requirements(decision.decision_requirements_key, &step.decision_id)?;
        evaluated.push(EvaluatedDecision {
            decision_id: step.decision_id.clone(),
            decision_name: step.decision_name.clone(),
            decision_key: record.as_ref().map_or(-1, |r| r.decision_key),
            decision_version: record.as_ref().map_or(-1, |r| r.version),
            decision_type: step.decision_type.to_string(),
            decision_output: json_text(&step.output),
            evaluated_inputs: step
                .evaluated_inputs
                .iter()
                .map(|input| EvaluatedInput {
                    input_id: input.input_id.clone(),
                    input_name: input.input_name.clone(),
                    input_value: json_text(&input.value),
                })
                .collect(),
            matched_rules: step
                .matched_rules
                .iter()
                .map(|rule| MatchedRule {
                    rule_id: rule.rule_id.clone(),
                    rule_index: i32::try_from(rule.rule_index).unwrap_or(i32::MAX),
                    evaluated_outputs: rule
                        .evaluated_outputs
                        .iter()
                        .map(|output| EvaluatedOutput {
                            output_id: output.output_id.clone(),
                            output_name: output.output_name.clone(),
                            output_value: json_text(&output.value),
                        })
                        .collect(),
                })
                .collect(),
            tenant_id: decision.tenant_id.clone(),
        });
    }
    let decision_type = evaluation
        .evaluated_decisions
        .iter()
        .find(|d| d.decision_id == decision.decision_id)
        .map(|d| d.decision_type.to_string())
        .unwrap_or_default();
    let (failed_decision_id, evaluation_failure_message) = match &evaluation.failure {
        Some(failure) => (
            failure.decision_id.clone(),
            format!(
                "Expected to evaluate decision '{}', but {}",
                decision.decision_id, failure.message
            ),
        ),
        None => (String::new(), String::new()),
    };
    Ok(DecisionEvaluationRecord {
        decision_key: decision.decision_key,
        decision_id: decision.decision_id.clone(),
        decision_name: decision.decision_name.clone(),
        decision_version: decision.version,
        decision_type,
        decision_output: json_text(&evaluation.output),
        variables: Vec::new(),
        bpmn_process_id: String::new(),
        process_definition_key: -1,
        process_instance_key: -1,
        element_id: String::new(),
        element_instance_key: -1,
        evaluated_decisions: evaluated,
        evaluation_failure_message,
        failed_decision_id,
        tenant_id: decision.tenant_id.clone(),
        decision_requirements_key: decision.decision_requirements_key,
        decision_requirements_id: decision.decision_requirements_id.clone(),
    })
}
