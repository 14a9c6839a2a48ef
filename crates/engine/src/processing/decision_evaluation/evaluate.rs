use beeline_protocol::intent::DecisionEvaluationIntent;
use beeline_protocol::value::DecisionEvaluationRecord;
use beeline_protocol::{Record, RejectionType, tenant_or_default};

use super::evaluate_decision;
use crate::error::ProcessingError;
use crate::expression::ScopeVariables;
use crate::processing::bpmn::behavior::variables::parse_document;
use crate::processing::{CommandProcessor, ProcessingContext, value_of};

/// `DECISION_EVALUATION EVALUATE` (the `EvaluateDecision` RPC): evaluates a decision by key, or
/// the latest version by id, with the given variables. A failed evaluation is answered with
/// the FAILED event (as Zeebe does), not a rejection.
pub(crate) struct DecisionEvaluateProcessor;

impl CommandProcessor for DecisionEvaluateProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let request = value_of::<DecisionEvaluationRecord>(command)?.clone();
        let variables = match parse_document(&request.variables) {
            Ok(variables) => variables,
            Err(reason) => {
                ctx.reject(
                    command,
                    RejectionType::InvalidArgument,
                    format!("Expected to evaluate decision with variables, but {reason}"),
                );
                return Ok(());
            }
        };
        let tenant = tenant_or_default(&request.tenant_id);
        let decision = if request.decision_key > 0 {
            // A decision of another tenant is not there for this command.
            ctx.state()
                .decisions()
                .get(request.decision_key)?
                .filter(|decision| decision.tenant_id == tenant)
        } else if !request.decision_id.is_empty() {
            match ctx
                .state()
                .decisions()
                .latest(tenant, &request.decision_id)?
            {
                Some((_, key)) => ctx.state().decisions().get(key)?,
                None => None,
            }
        } else {
            ctx.reject(
                command,
                RejectionType::InvalidArgument,
                "Expected either a decision id or a valid decision key, but none provided",
            );
            return Ok(());
        };
        let Some(decision) = decision else {
            let reason = if request.decision_key > 0 {
                format!(
                    "Expected to evaluate decision with key '{}', but no such decision found",
                    request.decision_key
                )
            } else {
                format!(
                    "Expected to evaluate decision '{}', but no decision found for id '{}'",
                    request.decision_id, request.decision_id
                )
            };
            ctx.reject(command, RejectionType::NotFound, reason);
            return Ok(());
        };
        let state = ctx.state();
        let scope = ScopeVariables::new(state, -1).with_overlay(&variables);
        let mut evaluated = evaluate_decision(state, &decision, &scope, ctx.now())?;
        evaluated.variables = request.variables.clone();
        let intent = if evaluated.failed_decision_id.is_empty() {
            DecisionEvaluationIntent::Evaluated
        } else {
            DecisionEvaluationIntent::Failed
        };
        let key = ctx.next_key()?;
        let event = ctx.append_event(key, intent, evaluated)?;
        ctx.respond(event);
        Ok(())
    }
}
