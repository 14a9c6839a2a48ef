//! The business rule task (Zeebe's `BusinessRuleTaskProcessor`): a DMN decision evaluated
//! when the task completes (DECISION_EVALUATION EVALUATED or FAILED), whose output is the
//! variable it completes with; or, with a `zeebe:taskDefinition`, a job worker's task.

use beeline_bpmn::{BusinessRuleTask, ElementData, ExprOrStatic};
use beeline_protocol::intent::DecisionEvaluationIntent;
use serde_json::{Map, Value as Json};

use crate::expression::{ScopeVariables, wrong_type};
use crate::processing::bpmn::behavior::variables::{Document, eval};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, ErrorType, Failure, Step};
use crate::processing::decision_evaluation::evaluate_decision;

pub(crate) struct BusinessRuleTaskProcessor;

impl ElementProcessor for BusinessRuleTaskProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        super::activate_computing_or_job_worker(bpmn)
    }

    fn completion_result(
        &self,
        bpmn: &mut BpmnElementContext<'_, '_, '_>,
        again: bool,
    ) -> Step<Option<Document>> {
        if again {
            return Ok(None);
        }
        decision_result(bpmn)
    }
}

/// The task's decision, evaluated, as the variables the task completes with.
fn decision_result(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<Option<Document>> {
    let ElementData::BusinessRuleTask(BusinessRuleTask::CalledDecision(called)) =
        bpmn.element().data.clone()
    else {
        return Ok(None);
    };
    let decision_id = match &called.decision_id {
        ExprOrStatic::Static(id) => id.clone(),
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((beeline_feel::Value::String(id), _)) => id.to_string(),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                return Err(Failure::Incident(
                    ErrorType::ExtractValueError,
                    wrong_type(expression, "STRING", &other, &warnings),
                ));
            }
            Err(failure) => {
                return Err(Failure::of_evaluation(
                    failure,
                    ErrorType::ExtractValueError,
                ));
            }
        },
    };
    let decision = match bpmn
        .ctx
        .state()
        .decisions()
        .latest(&bpmn.process.tenant_id, &decision_id)?
    {
        Some((_, key)) => bpmn.ctx.state().decisions().get(key)?,
        None => None,
    };
    let Some(decision) = decision else {
        return Err(Failure::Incident(
            ErrorType::CalledDecisionError,
            format!(
                "Expected to evaluate decision '{decision_id}', but no decision found for id '{decision_id}'"
            ),
        ));
    };
    let mut evaluated = {
        let state = bpmn.ctx.state();
        let variables = ScopeVariables::new(state, bpmn.key);
        evaluate_decision(state, &decision, &variables, bpmn.ctx.now())?
    };
    evaluated.bpmn_process_id = bpmn.record.bpmn_process_id.clone();
    evaluated.process_definition_key = bpmn.record.process_definition_key;
    evaluated.process_instance_key = bpmn.record.process_instance_key;
    evaluated.element_id = bpmn.record.element_id.clone();
    evaluated.element_instance_key = bpmn.key;
    let key = bpmn.ctx.next_key()?;
    if !evaluated.failed_decision_id.is_empty() {
        let message = evaluated.evaluation_failure_message.clone();
        bpmn.ctx
            .append_event(key, DecisionEvaluationIntent::Failed, evaluated)?;
        return Err(Failure::Incident(
            ErrorType::DecisionEvaluationError,
            message,
        ));
    }
    let output: Json = serde_json::from_str(&evaluated.decision_output).unwrap_or(Json::Null);
    bpmn.ctx
        .append_event(key, DecisionEvaluationIntent::Evaluated, evaluated)?;
    let mut result = Map::new();
    result.insert(called.result_variable.clone(), output);
    Ok(Some(Document::from_map(&result)))
}
