//! `EvaluateDecision` → `DECISION_EVALUATION EVALUATE` on any partition (round-robin).
//!
//! Not available yet: the protocol crate has no `DecisionEvaluationRecord` value, so there is
//! no command to send. The request is checked, so errors in it are named already.

use beeline_protocol::intent::DecisionEvaluationIntent;

use crate::dispatch::Dispatcher;
use crate::error::GatewayError;
use crate::proto::{EvaluateDecisionRequest, EvaluateDecisionResponse};
use crate::validate;

pub(crate) fn check(request: &EvaluateDecisionRequest) -> Result<(), GatewayError> {
    if request.decision_id.trim().is_empty() && request.decision_key <= 0 {
        return Err(GatewayError::InvalidArgument(
            "Expected either a decisionId or a decisionKey, but none given".into(),
        ));
    }
    validate::variables("variables", &request.variables)?;
    validate::tenant("EvaluateDecision", &request.tenant_id)?;
    Ok(())
}

pub(crate) async fn handle(
    _d: &Dispatcher,
    request: EvaluateDecisionRequest,
) -> Result<EvaluateDecisionResponse, GatewayError> {
    check(&request)?;
    Err(GatewayError::not_built(
        "evaluating decisions",
        "DECISION_EVALUATION",
        DecisionEvaluationIntent::Evaluate.into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_is_named_by_id_or_key() {
        let request = EvaluateDecisionRequest::default();
        assert!(
            check(&request)
                .unwrap_err()
                .to_string()
                .contains("decisionId")
        );
        assert!(
            check(&EvaluateDecisionRequest {
                decision_key: 5,
                ..request
            })
            .is_ok()
        );
    }
}
