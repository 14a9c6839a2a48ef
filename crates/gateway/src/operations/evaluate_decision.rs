//! Evaluate a decision: `DECISION_EVALUATION EVALUATE` on the next partition in turn (every
//! partition has the deployed decisions). A failed evaluation is an answer, not an error: its
//! record names the failed decision and why.

use beeline_protocol::Record;
use beeline_protocol::intent::DecisionEvaluationIntent;
use beeline_protocol::key::NO_KEY;
use beeline_protocol::value::DecisionEvaluationRecord;

use super::{Keyed, keyed};
use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::routing::RoundRobin;
use crate::tenancy;
use crate::validate;

/// Which decision to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub enum DecisionSelector {
    /// The latest version of the decision with this id.
    Id(String),
    /// The decision with this key.
    Key(i64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct EvaluateDecision {
    pub decision: DecisionSelector,
    /// A JSON object as text; empty for none.
    pub variables: String,
    pub tenant_id: String,
}

pub(crate) fn command(request: &EvaluateDecision) -> Result<Record, GatewayError> {
    let (decision_id, decision_key) = match &request.decision {
        DecisionSelector::Id(id) => {
            validate::not_empty("decisionDefinitionId", id)?;
            (id.clone(), NO_KEY)
        }
        DecisionSelector::Key(key) => {
            validate::key_format("decisionDefinitionKey", *key)?;
            (String::new(), *key)
        }
    };
    let variables = validate::variables("variables", &request.variables)?;
    let tenant_id = tenancy::tenant("EvaluateDecision", &request.tenant_id)?;
    Ok(Record::command(
        NO_KEY,
        DecisionEvaluationIntent::Evaluate,
        DecisionEvaluationRecord {
            decision_key,
            decision_id,
            variables,
            tenant_id,
            process_definition_key: NO_KEY,
            process_instance_key: NO_KEY,
            element_instance_key: NO_KEY,
            ..DecisionEvaluationRecord::default()
        },
    ))
}

/// The evaluation's key and the EVALUATED or FAILED event's value.
pub async fn run(
    d: &Dispatcher,
    request: EvaluateDecision,
) -> Result<Keyed<DecisionEvaluationRecord>, GatewayError> {
    static ORDER: RoundRobin = RoundRobin::new();
    d.require(DecisionEvaluationIntent::Evaluate, "evaluating decisions")?;
    let command = command(&request)?;
    let event = d
        .execute_anywhere(&ORDER, command, d.config.request_timeout)
        .await?;
    keyed(event)
}

/// Whether the evaluation failed (its record names the failed decision).
pub fn failed(evaluation: &DecisionEvaluationRecord) -> bool {
    !evaluation.failed_decision_id.is_empty()
}

/// Zeebe's key of one evaluated decision within an evaluation:
/// `<evaluation key>-<position, from 1>`.
pub fn evaluation_instance_key(evaluation_key: i64, index: usize) -> String {
    format!("{evaluation_key}-{}", index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_becomes_an_evaluate_command() {
        let record = command(&EvaluateDecision {
            decision: DecisionSelector::Id("dish".into()),
            variables: r#"{"season":"Fall"}"#.into(),
            tenant_id: String::new(),
        })
        .unwrap();
        assert_eq!(record.intent, DecisionEvaluationIntent::Evaluate.into());
        let evaluation = record.value_as::<DecisionEvaluationRecord>().unwrap();
        assert_eq!(evaluation.decision_id, "dish");
        assert_eq!(evaluation.decision_key, NO_KEY);
        assert_eq!(evaluation.variables, br#"{"season":"Fall"}"#);
        assert_eq!(evaluation.tenant_id, "<default>");
        let none = command(&EvaluateDecision {
            decision: DecisionSelector::Id(String::new()),
            variables: String::new(),
            tenant_id: String::new(),
        })
        .unwrap_err();
        assert_eq!(none.to_string(), "No decisionDefinitionId provided");
    }

    #[test]
    fn evaluation_instance_keys_count_from_one() {
        assert_eq!(evaluation_instance_key(99, 0), "99-1");
    }
}
