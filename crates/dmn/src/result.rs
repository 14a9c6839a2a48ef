//! What evaluating a decision produces, shaped like Zeebe's `EvaluateDecisionResponse`:
//! the output, every decision evaluated on the way (required ones first) with its inputs
//! and matched rules, and on failure the failed decision and the reason.

use beeline_feel::{Value, Warning};

#[derive(Clone, Debug)]
pub struct EvaluatedInput {
    pub input_id: String,
    /// The input's label, or its expression when it has none (as Zeebe reports it).
    pub input_name: String,
    pub value: Value,
}

#[derive(Clone, Debug)]
pub struct EvaluatedOutput {
    pub output_id: String,
    pub output_name: String,
    pub value: Value,
}

#[derive(Clone, Debug)]
pub struct MatchedRule {
    pub rule_id: String,
    /// 1-based position of the rule in the table.
    pub rule_index: usize,
    pub evaluated_outputs: Vec<EvaluatedOutput>,
}

#[derive(Clone, Debug)]
pub struct EvaluatedDecision {
    pub decision_id: String,
    pub decision_name: String,
    /// `DECISION_TABLE`, `LITERAL_EXPRESSION`, `CONTEXT`, ...
    pub decision_type: &'static str,
    pub output: Value,
    pub evaluated_inputs: Vec<EvaluatedInput>,
    pub matched_rules: Vec<MatchedRule>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionFailure {
    pub decision_id: String,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct DecisionEvaluation {
    pub decision_id: String,
    pub decision_name: String,
    /// The decision's result (null when evaluation failed).
    pub output: Value,
    pub evaluated_decisions: Vec<EvaluatedDecision>,
    pub failure: Option<DecisionFailure>,
    /// Why parts of the result are null (missing variables, type mismatches, ...).
    pub warnings: Vec<Warning>,
}

impl DecisionEvaluation {
    pub fn is_failure(&self) -> bool {
        self.failure.is_some()
    }

    /// The output as Zeebe writes it (`decisionOutput`, the result variable).
    pub fn output_json(&self) -> serde_json::Value {
        self.output.to_json()
    }
}
