//! FEEL in the engine: variables come lazily from the scope chain in state, time from the
//! record, randomness from the record position; failures become Zeebe-worded messages for
//! incidents.

use std::cell::RefCell;

use beeline_feel::{Clock, EvalContext, Expression, Value, Variables};

use crate::state::EngineState;

/// Variables visible from a scope: an optional overlay first (values computed in this step),
/// then the scope's own variables, then its ancestors'.
pub(crate) struct ScopeVariables<'a, 's> {
    state: &'a EngineState<'s>,
    scope: i64,
    overlay: Option<&'a serde_json::Map<String, serde_json::Value>>,
    /// A state read that failed during evaluation; reported after it.
    failure: RefCell<Option<beeline_state::Error>>,
}

impl<'a, 's> ScopeVariables<'a, 's> {
    pub fn new(state: &'a EngineState<'s>, scope: i64) -> Self {
        Self {
            state,
            scope,
            overlay: None,
            failure: RefCell::new(None),
        }
    }

    pub fn with_overlay(mut self, overlay: &'a serde_json::Map<String, serde_json::Value>) -> Self {
        self.overlay = Some(overlay);
        self
    }

    fn take_failure(&self) -> Option<beeline_state::Error> {
        self.failure.borrow_mut().take()
    }
}

impl Variables for ScopeVariables<'_, '_> {
    fn get(&self, name: &str) -> Option<Value> {
        if let Some(value) = self.overlay.and_then(|o| o.get(name)) {
            return Some(Value::from_json(value));
        }
        if self.scope <= 0 {
            return None;
        }
        match self.state.variables().get_visible(self.scope, name) {
            Ok(Some((_, variable))) => serde_json::from_str::<serde_json::Value>(&variable.value)
                .ok()
                .map(|json| Value::from_json(&json)),
            Ok(None) => None,
            Err(e) => {
                self.failure.borrow_mut().get_or_insert(e);
                None
            }
        }
    }
}

/// Why an evaluation gave no usable value.
#[derive(Debug)]
pub(crate) enum EvalFailure {
    /// The expression failed or had the wrong type: becomes an incident with this message.
    Incident(String),
    /// State could not be read.
    State(beeline_state::Error),
}

impl From<beeline_state::Error> for EvalFailure {
    fn from(e: beeline_state::Error) -> Self {
        EvalFailure::State(e)
    }
}

/// Evaluates `expression` at `now` (ms since the epoch) with a replayable `seed`.
pub(crate) fn evaluate(
    expression: &Expression,
    variables: &ScopeVariables<'_, '_>,
    now: i64,
    seed: i64,
) -> Result<(Value, String), EvalFailure> {
    let context = EvalContext::new(variables)
        .with_clock(Clock::from_epoch_millis(now))
        .with_seed(seed as u64);
    let result = expression.evaluate_with_warnings(&context);
    if let Some(failure) = variables.take_failure() {
        return Err(EvalFailure::State(failure));
    }
    match result {
        Ok(evaluation) => {
            let warnings = evaluation
                .warnings
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join("\n");
            Ok((evaluation.value, warnings))
        }
        Err(e) => Err(EvalFailure::Incident(expression.failure_message(&e))),
    }
}

/// Zeebe's name for the type of a value, as its messages say it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Number(_) => "NUMBER",
        Value::String(_) => "STRING",
        Value::Date(_) => "DATE",
        Value::Time(_) => "TIME",
        Value::DateTime(_) => "DATE_TIME",
        Value::DayTimeDuration(_) => "DURATION",
        Value::YearMonthDuration(_) => "PERIOD",
        Value::List(_) => "ARRAY",
        Value::Context(_) => "OBJECT",
        Value::Range(_) => "RANGE",
        Value::Function(_) => "FUNCTION",
    }
}

/// Zeebe's message for a result of the wrong type.
pub(crate) fn wrong_type(
    expression: &Expression,
    expected: &str,
    value: &Value,
    warnings: &str,
) -> String {
    let mut message = format!(
        "Expected result of the expression '{}' to be '{expected}', but was '{}'.",
        expression.source(),
        type_name(value)
    );
    if !warnings.is_empty() {
        message.push_str(" The evaluation reported the following warnings:\n");
        message.push_str(warnings);
    }
    message
}
