//! Gateways. Exclusive, inclusive and parallel gateways go through their whole lifecycle at
//! once and take the flows they choose; an event-based gateway waits for the first of its
//! events.

pub(super) mod event_based;
pub(super) mod exclusive;
pub(super) mod inclusive;
pub(super) mod parallel;

use beeline_bpmn::{Gateway, SequenceFlowIndex};
use beeline_feel::Value;
use beeline_protocol::intent::ProcessInstanceIntent as PI;

use super::behavior::flow;
use super::behavior::variables::eval;
use super::{BpmnElementContext, ErrorType, Failure, Step};
use crate::error::ProcessingError;
use crate::expression::wrong_type;

/// ELEMENT_ACTIVATED, ELEMENT_COMPLETING and ELEMENT_COMPLETED at once, then the chosen flows.
fn pass_through(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    flows: &[SequenceFlowIndex],
) -> Result<(), ProcessingError> {
    bpmn.write(PI::ElementActivated)?;
    bpmn.write(PI::ElementCompleting)?;
    bpmn.write(PI::ElementCompleted)?;
    if flows.is_empty() {
        flow::path_ended(bpmn)
    } else {
        flow::take(bpmn, flows)
    }
}

/// Whether the condition of `flow` holds (a flow without condition always does).
fn holds(bpmn: &BpmnElementContext<'_, '_, '_>, flow: SequenceFlowIndex) -> Step<bool> {
    let Some(condition) = bpmn.process.model[flow].condition.clone() else {
        return Ok(true);
    };
    match eval(bpmn, condition.id, bpmn.key, None) {
        Ok((Value::Bool(b), _)) => Ok(b),
        Ok((other, warnings)) => {
            let expression = &bpmn.process.expressions[condition.id.index()];
            Err(Failure::Incident(
                ErrorType::ConditionError,
                wrong_type(expression, "BOOLEAN", &other, &warnings),
            ))
        }
        Err(failure) => Err(Failure::of_evaluation(failure, ErrorType::ConditionError)),
    }
}

fn gateway(bpmn: &BpmnElementContext<'_, '_, '_>) -> Gateway {
    bpmn.element().data.gateway().cloned().unwrap_or_default()
}

/// No flow can be taken.
fn no_flow_taken() -> Failure {
    Failure::Incident(
        ErrorType::ConditionError,
        "Expected at least one condition to evaluate to true, or to have a default flow"
            .to_string(),
    )
}
