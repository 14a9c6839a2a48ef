//! BPMN resource in, runnable processes or every problem out: parse and validate the XML,
//! refuse element kinds the engine does not run yet, compile every FEEL expression.

use std::sync::Arc;

use beeline_bpmn::{
    Element, ElementData, ElementKind, ElementKindSet, ExpressionContext, ParseError, Process,
    ValidationError, ValidationErrors,
};
use beeline_feel::{EvalContext, Expression};

/// What this engine executes. Everything else is refused at deployment, by name.
pub fn supported_kinds() -> ElementKindSet {
    use ElementKind::*;
    [
        Process,
        SubProcess,
        Task,
        ManualTask,
        ServiceTask,
        SendTask,
        ScriptTask,
        BusinessRuleTask,
        ExclusiveGateway,
        ParallelGateway,
        InclusiveGateway,
        NoneStartEvent,
        NoneEndEvent,
        TerminateEndEvent,
        NoneIntermediateThrowEvent,
        MessageIntermediateThrowEvent,
        MessageEndEvent,
        EventSubProcess,
        ErrorBoundaryEvent,
        ErrorStartEvent,
        ErrorEndEvent,
        EscalationBoundaryEvent,
        EscalationStartEvent,
        EscalationEndEvent,
        EscalationIntermediateThrowEvent,
        LinkIntermediateThrowEvent,
        LinkIntermediateCatchEvent,
    ]
    .into_iter()
    .collect()
}

/// One process of a resource, compiled.
#[derive(Debug)]
pub struct TransformedProcess {
    pub model: Arc<Process>,
    pub expressions: Vec<Arc<Expression>>,
}

/// Parses a BPMN resource. The error lists every problem, in Zeebe's format.
pub fn transform_bpmn(bytes: &[u8]) -> Result<Vec<TransformedProcess>, String> {
    let definitions = match beeline_bpmn::parse(bytes) {
        Ok(definitions) => definitions,
        Err(ParseError::Xml(e)) => return Err(format!("{e}")),
        Err(ParseError::Invalid(errors)) => return Err(errors.to_zeebe_string()),
    };
    let supported = supported_kinds();
    let mut problems = ValidationErrors::default();
    let mut processes = Vec::new();
    for model in definitions.processes {
        problems.0.extend(model.unsupported_elements(&supported));
        for (_, element) in model.iter() {
            if let Some(message) = unsupported_variant(element) {
                problems.0.push(ValidationError {
                    element: element.id.clone(),
                    element_id: Some(element.id.clone()),
                    position: element.position,
                    message: message.to_string(),
                });
            }
        }
        let mut expressions = Vec::with_capacity(model.expressions().len());
        for entry in model.expressions() {
            let problem = |message: String| ValidationError {
                element: entry.origin.element_id.clone(),
                element_id: Some(entry.origin.element_id.clone()),
                position: entry.origin.position,
                message,
            };
            match Expression::parse(&entry.text) {
                Ok(expression) => {
                    if entry.context == ExpressionContext::Constant
                        && let Err(reason) = constant(&expression)
                    {
                        problems.0.push(problem(format!(
                            "Expected constant expression but found '={}': {reason}",
                            entry.text
                        )));
                    }
                    expressions.push(Arc::new(expression));
                }
                Err(e) => problems.0.push(problem(format!(
                    "failed to parse expression '={}' ({}): {e}",
                    entry.text, entry.origin.attribute
                ))),
            }
        }
        processes.push(TransformedProcess { model, expressions });
    }
    if problems.is_empty() {
        Ok(processes)
    } else {
        Err(problems.to_zeebe_string())
    }
}

/// Elements of a supported kind that this engine still cannot run in the form they take.
fn unsupported_variant(element: &Element) -> Option<&'static str> {
    if !element.execution_listeners.is_empty() {
        return Some("Execution listeners (zeebe:executionListeners) are not supported yet");
    }
    match &element.data {
        ElementData::SendTask(_)
        | ElementData::IntermediateThrowEvent(_)
        | ElementData::EndEvent(_)
            if matches!(
                element.kind(),
                ElementKind::SendTask
                    | ElementKind::MessageIntermediateThrowEvent
                    | ElementKind::MessageEndEvent
            ) && element.job_worker().is_none() =>
        {
            Some("Messages are only thrown through a job worker (zeebe:taskDefinition) so far")
        }
        _ => None,
    }
}

fn constant(expression: &Expression) -> Result<(), String> {
    if let Some(name) = expression.variables().first() {
        return Err(format!("it reads the variable '{name}'"));
    }
    expression
        .evaluate(&EvalContext::new(&()))
        .map(|_| ())
        .map_err(|e| e.to_string())
}
