use beeline_protocol::intent::TimerIntent;
use beeline_protocol::value::TimerRecord;
use beeline_protocol::{Record, RejectionType};

use crate::error::ProcessingError;
use crate::model::DeployedProcess;
use crate::processing::bpmn::Failure;
use crate::processing::bpmn::behavior::subscriptions::{Awaited, awaited};
use crate::processing::bpmn::behavior::variables::Document;
use crate::processing::bpmn::behavior::{events, timers};
use crate::processing::{CommandProcessor, ProcessingContext};

/// `TIMER TRIGGER`: a due timer triggers its catch element, or starts an instance at its
/// timer start event. A cycle that goes on (a start event, a non-interrupting boundary event
/// or event sub-process) gets its next timer.
pub(crate) struct TimerTriggerProcessor;

impl CommandProcessor for TimerTriggerProcessor {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError> {
        let Some(timer) = ctx.state().timers().get(command.key)? else {
            ctx.reject(
                command,
                RejectionType::NotFound,
                format!(
                    "Expected to trigger timer with key '{}', but no such timer was found",
                    command.key
                ),
            );
            return Ok(());
        };
        let process = ctx
            .state()
            .processes()
            .deployed(timer.process_definition_key)?
            .ok_or_else(|| {
                ProcessingError::Internal(format!(
                    "process definition {} of timer {} is not deployed",
                    timer.process_definition_key, command.key
                ))
            })?;
        if timer.element_instance_key <= 0 {
            let Some(start) = process.element(&timer.target_element_id) else {
                return Err(ProcessingError::Internal(format!(
                    "timer start event '{}' is not in process '{}'",
                    timer.target_element_id, process.bpmn_process_id
                )));
            };
            let instance_key = ctx.next_key()?;
            ctx.append_event(
                command.key,
                TimerIntent::Triggered,
                TimerRecord {
                    process_instance_key: instance_key,
                    ..timer.clone()
                },
            )?;
            events::start_instance(ctx, &process, start, Vec::new(), instance_key)?;
            return reschedule(ctx, &process, &timer, -1);
        }
        let catch = match ctx
            .state()
            .element_instances()
            .get(timer.element_instance_key)?
        {
            Some(instance) => events::catch_of(&process, &instance, &timer.target_element_id),
            None => None,
        };
        let Some(catch) = catch.filter(|c| events::can_trigger(ctx, c).unwrap_or(false)) else {
            ctx.reject(
                command,
                RejectionType::InvalidState,
                format!(
                    "Expected to trigger timer with key '{}', but its element instance with key '{}' cannot take an event now",
                    command.key, timer.element_instance_key
                ),
            );
            return Ok(());
        };
        ctx.append_event(command.key, TimerIntent::Triggered, timer.clone())?;
        events::trigger(ctx, &process, &catch, &Document::default())?;
        if !catch.interrupting() {
            reschedule(ctx, &process, &timer, timer.element_instance_key)?;
        }
        Ok(())
    }
}

/// The next timer of a cycle that has repetitions left, evaluated again in `scope`.
fn reschedule(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    timer: &TimerRecord,
    scope: i64,
) -> Result<(), ProcessingError> {
    let Some(target) = process.element(&timer.target_element_id) else {
        return Ok(());
    };
    let Some(Awaited::Timer(definition)) = awaited(&process.model[target]) else {
        return Ok(());
    };
    let schedule = match timers::schedule(ctx, process, definition, scope) {
        Ok(schedule) => schedule,
        Err(Failure::Incident(_, message)) => {
            tracing::warn!(
                timer = timer.target_element_id,
                "the timer cycle ends: its definition cannot be evaluated again: {message}"
            );
            return Ok(());
        }
        Err(Failure::Fatal(error)) => return Err(error),
    };
    let (due_date, repetitions) =
        match timers::next(&schedule, timer.due_date, timer.repetitions, ctx.now()) {
            Ok(Some(next)) => next,
            Ok(None) => return Ok(()),
            Err(message) => {
                tracing::warn!(
                    timer = timer.target_element_id,
                    "the timer cycle ends: {message}"
                );
                return Ok(());
            }
        };
    let key = ctx.next_key()?;
    ctx.append_event(
        key,
        TimerIntent::Created,
        TimerRecord {
            due_date,
            repetitions,
            process_instance_key: if scope > 0 {
                timer.process_instance_key
            } else {
                -1
            },
            ..timer.clone()
        },
    )?;
    Ok(())
}
