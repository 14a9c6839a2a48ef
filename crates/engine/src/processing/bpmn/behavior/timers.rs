//! Timer definitions turned into due dates: the text (static, or a FEEL expression evaluated
//! in the element instance's scope) parsed by `beeline-timer` as Zeebe reads it.

use beeline_bpmn::{ExprOrStatic, TimerDefinition};
use beeline_timer::{Due, Schedule, TimerKind};

use crate::expression::{ScopeVariables, evaluate};
use crate::model::DeployedProcess;
use crate::processing::ProcessingContext;
use crate::processing::bpmn::{ErrorType, Failure, Step};

/// The schedule of a timer definition, evaluated against the variables visible from `scope`
/// (`-1`: none, for timer start events); a definition that gives no schedule is an incident.
pub(crate) fn schedule(
    ctx: &ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    definition: &TimerDefinition,
    scope: i64,
) -> Step<Schedule> {
    let (kind, value) = match definition {
        TimerDefinition::Duration(v) => (TimerKind::Duration, v),
        TimerDefinition::Date(v) => (TimerKind::Date, v),
        TimerDefinition::Cycle(v) => (TimerKind::Cycle, v),
    };
    let incident = |message: String| Failure::Incident(ErrorType::ExtractValueError, message);
    match value {
        ExprOrStatic::Static(text) => {
            Schedule::parse(kind, text).map_err(|e| incident(e.to_string()))
        }
        ExprOrStatic::Expression(source) => {
            let Some(expression) = process.expression(source.id) else {
                return Err(incident(format!(
                    "timer expression {} of process '{}' was not compiled",
                    source.id.0, process.bpmn_process_id
                )));
            };
            let variables = ScopeVariables::new(ctx.state(), scope);
            let (value, _) = evaluate(
                expression,
                &variables,
                ctx.now(),
                ctx.source_position() ^ scope,
            )
            .map_err(|failure| Failure::of_evaluation(failure, ErrorType::ExtractValueError))?;
            Schedule::from_value(kind, &value, expression.source())
                .map_err(|e| incident(e.to_string()))
        }
    }
}

/// The first due date and the repetitions of a timer created at `now`.
pub(crate) fn first(schedule: &Schedule, now: i64) -> Result<(i64, i32), String> {
    let due = schedule.first(now).map_err(|e| e.to_string())?;
    Ok((due.due_date, due.repetitions))
}

/// The next timer of a cycle whose timer was due at `due_date` with `repetitions` and
/// triggered at `now`: its due date and repetitions, `None` when the cycle is over.
pub(crate) fn next(
    schedule: &Schedule,
    due_date: i64,
    repetitions: i32,
    now: i64,
) -> Result<Option<(i64, i32)>, String> {
    let next = schedule
        .next(
            Due {
                due_date,
                repetitions,
            },
            now,
        )
        .map_err(|e| e.to_string())?;
    Ok(next.map(|due| (due.due_date, due.repetitions)))
}
