//! Which flows an exclusive or inclusive gateway takes (Zeebe's `ExclusiveGatewayProcessor`
//! and `InclusiveGatewayProcessor`).

use beeline_bpmn::{Gateway, SequenceFlowIndex};
use beeline_feel::Value;

use super::variables::eval;
use super::{Bpmn, Step};
use crate::error::ProcessingError;
use crate::expression::{EvalFailure, wrong_type};

/// The outcome of evaluating a gateway's conditions.
pub(super) enum Choice {
    Take(Vec<SequenceFlowIndex>),
    /// No flow can be taken: an incident with this message.
    Incident(String),
}

/// Whether the condition of `flow` holds (a flow without condition always does).
fn holds(bpmn: &Bpmn<'_, '_, '_>, flow: SequenceFlowIndex) -> Step<bool> {
    let Some(condition) = bpmn.process.model[flow].condition.clone() else {
        return Ok(Ok(true));
    };
    match eval(bpmn, condition.id, bpmn.key, None) {
        Ok((Value::Bool(b), _)) => Ok(Ok(b)),
        Ok((other, warnings)) => {
            let expression = &bpmn.process.expressions[condition.id.index()];
            Ok(Err(wrong_type(expression, "BOOLEAN", &other, &warnings)))
        }
        Err(EvalFailure::Incident(message)) => Ok(Err(message)),
        Err(EvalFailure::State(e)) => Err(e.into()),
    }
}

fn gateway(bpmn: &Bpmn<'_, '_, '_>) -> Gateway {
    bpmn.element().data.gateway().cloned().unwrap_or_default()
}

/// The first outgoing flow whose condition holds, else the default flow.
pub(super) fn exclusive(bpmn: &Bpmn<'_, '_, '_>) -> Result<Choice, ProcessingError> {
    let element = bpmn.element();
    let outgoing = element.outgoing.clone();
    let default = gateway(bpmn).default_flow;
    if outgoing.len() == 1 && bpmn.process.model[outgoing[0]].condition.is_none() {
        return Ok(Choice::Take(outgoing));
    }
    for &flow in &outgoing {
        if Some(flow) == default {
            continue;
        }
        match holds(bpmn, flow)? {
            Ok(true) => return Ok(Choice::Take(vec![flow])),
            Ok(false) => {}
            Err(message) => return Ok(Choice::Incident(message)),
        }
    }
    Ok(match default {
        Some(flow) => Choice::Take(vec![flow]),
        None => Choice::Incident(
            "Expected at least one condition to evaluate to true, or to have a default flow"
                .to_string(),
        ),
    })
}

/// Every outgoing flow whose condition holds, else the default flow.
pub(super) fn inclusive(bpmn: &Bpmn<'_, '_, '_>) -> Result<Choice, ProcessingError> {
    let outgoing = bpmn.element().outgoing.clone();
    let default = gateway(bpmn).default_flow;
    let mut taken = Vec::new();
    for &flow in &outgoing {
        if Some(flow) == default {
            continue;
        }
        match holds(bpmn, flow)? {
            Ok(true) => taken.push(flow),
            Ok(false) => {}
            Err(message) => return Ok(Choice::Incident(message)),
        }
    }
    if !taken.is_empty() {
        return Ok(Choice::Take(taken));
    }
    Ok(match default {
        Some(flow) => Choice::Take(vec![flow]),
        None if outgoing.is_empty() => Choice::Take(Vec::new()),
        None => Choice::Incident(
            "Expected at least one condition to evaluate to true, or to have a default flow"
                .to_string(),
        ),
    })
}
