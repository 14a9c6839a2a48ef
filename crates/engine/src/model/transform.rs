//! BPMN resource in, runnable processes or every problem out: parse and validate the XML,
//! refuse element kinds the engine does not run yet, compile every FEEL expression.

use std::sync::Arc;

use beeline_bpmn::{
    Element, ElementData, ElementKind, ElementKindSet, EventDefinition, ExprOrStatic,
    ExpressionContext, ParseError, Process, TimerDefinition, ValidationError, ValidationErrors,
};
use beeline_feel::{EvalContext, Expression};
use beeline_timer::{Schedule, TimerKind};

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
        TimerStartEvent,
        TimerIntermediateCatchEvent,
        TimerBoundaryEvent,
        MessageStartEvent,
        MessageIntermediateCatchEvent,
        MessageBoundaryEvent,
        ReceiveTask,
        SignalStartEvent,
        SignalIntermediateCatchEvent,
        SignalBoundaryEvent,
        SignalIntermediateThrowEvent,
        SignalEndEvent,
        EventBasedGateway,
        MultiInstanceBody,
        CallActivity,
        UserTask,
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
        if problems.is_empty() {
            problems.0.extend(invalid_timers(&model, &expressions));
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

/// Timers whose definition cannot work: a static text that is not a valid date, duration
/// or cycle, or a timer start event whose expression (evaluated without variables, as it is
/// when the process is deployed) gives none.
fn invalid_timers(model: &Process, expressions: &[Arc<Expression>]) -> Vec<ValidationError> {
    let mut problems = Vec::new();
    for (_, element) in model.iter() {
        let Some(EventDefinition::Timer(definition)) = element.event_definition() else {
            continue;
        };
        let (kind, value) = match definition {
            TimerDefinition::Duration(v) => (TimerKind::Duration, v),
            TimerDefinition::Date(v) => (TimerKind::Date, v),
            TimerDefinition::Cycle(v) => (TimerKind::Cycle, v),
        };
        let result = match value {
            ExprOrStatic::Static(text) => Schedule::parse(kind, text).map(|_| ()),
            ExprOrStatic::Expression(source)
                if matches!(element.data, ElementData::StartEvent(_)) =>
            {
                let Some(expression) = expressions.get(source.id.index()) else {
                    continue;
                };
                match expression.evaluate(&EvalContext::new(&())) {
                    Ok(value) => {
                        Schedule::from_value(kind, &value, expression.source()).map(|_| ())
                    }
                    Err(e) => {
                        problems.push(timer_problem(element, format!(
                            "Expected a timer start event's expression to be valid without variables, but evaluating it failed: {e}"
                        )));
                        continue;
                    }
                }
            }
            ExprOrStatic::Expression(_) => Ok(()),
        };
        if let Err(error) = result {
            problems.push(timer_problem(element, error.deployment_message(kind)));
        }
    }
    problems
}

fn timer_problem(element: &Element, message: String) -> ValidationError {
    ValidationError {
        element: element.id.clone(),
        element_id: Some(element.id.clone()),
        position: element.position,
        message,
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
