//! Start events that wait for something — a timer, a message, a signal — are subscriptions
//! of the latest version of their process: deploying a new version closes those of the
//! version before and opens its own. Message and signal start events wait on every partition;
//! timer start events only on the deployment partition (one instance per due date). Deleting
//! the latest version closes its own and opens those of the version before.

use beeline_bpmn::ExprOrStatic;
use beeline_protocol::intent::{
    MessageStartEventSubscriptionIntent, SignalSubscriptionIntent, TimerIntent,
};
use beeline_protocol::partitioning::DEPLOYMENT_PARTITION;
use beeline_protocol::value::{
    MessageStartEventSubscriptionRecord, SignalSubscriptionRecord, TimerRecord,
};

use crate::error::ProcessingError;
use crate::expression::{ScopeVariables, evaluate};
use crate::model::DeployedProcess;
use crate::processing::ProcessingContext;
use crate::processing::bpmn::Failure;
use crate::processing::bpmn::behavior::subscriptions::{Awaited, awaited};
use crate::processing::bpmn::behavior::timers;

/// The process `process_key` became the latest version, after `previous` (if any).
pub(super) fn replace(
    ctx: &mut ProcessingContext<'_, '_>,
    process_key: i64,
    previous: Option<i64>,
) -> Result<(), ProcessingError> {
    if let Some(previous) = previous {
        close(ctx, previous)?;
    }
    let Some(process) = ctx.state().processes().deployed(process_key)? else {
        return Err(ProcessingError::Internal(format!(
            "process definition {process_key} was just deployed but cannot be found"
        )));
    };
    open(ctx, &process)
}

pub(crate) fn close(
    ctx: &mut ProcessingContext<'_, '_>,
    process_key: i64,
) -> Result<(), ProcessingError> {
    for subscription in ctx
        .state()
        .message_start_subscriptions()
        .of_process(process_key)?
    {
        ctx.append_event(
            subscription.key,
            MessageStartEventSubscriptionIntent::Deleted,
            subscription.record(),
        )?;
    }
    for (key, subscription) in ctx.state().signal_subscriptions().of_scope(process_key)? {
        if subscription.catch_event_instance_key <= 0 {
            ctx.append_event(key, SignalSubscriptionIntent::Deleted, subscription)?;
        }
    }
    for (key, timer) in ctx.state().timers().of_scope(process_key)? {
        if timer.element_instance_key <= 0 {
            ctx.append_event(key, TimerIntent::Canceled, timer)?;
        }
    }
    Ok(())
}

pub(crate) fn open(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
) -> Result<(), ProcessingError> {
    let starts = process
        .model
        .root()
        .scope
        .as_ref()
        .map(|s| s.start_events.clone())
        .unwrap_or_default();
    for start in starts {
        let element = &process.model[start];
        match awaited(element) {
            Some(Awaited::Message(message)) => {
                let Some(name) = constant_name(ctx, process, &message.name)? else {
                    continue;
                };
                let key = ctx.next_key()?;
                ctx.append_event(
                    key,
                    MessageStartEventSubscriptionIntent::Created,
                    MessageStartEventSubscriptionRecord {
                        process_definition_key: process.key,
                        bpmn_process_id: process.bpmn_process_id.clone(),
                        start_event_id: element.id.clone(),
                        message_name: name,
                        process_instance_key: -1,
                        correlation_key: String::new(),
                        message_key: -1,
                        variables: Vec::new(),
                        tenant_id: process.tenant_id.clone(),
                    },
                )?;
            }
            Some(Awaited::Signal(signal)) => {
                let Some(name) = constant_name(ctx, process, &signal.name)? else {
                    continue;
                };
                let key = ctx.next_key()?;
                ctx.append_event(
                    key,
                    SignalSubscriptionIntent::Created,
                    SignalSubscriptionRecord {
                        process_definition_key: process.key,
                        bpmn_process_id: process.bpmn_process_id.clone(),
                        catch_event_id: element.id.clone(),
                        catch_event_instance_key: -1,
                        signal_name: name,
                        tenant_id: process.tenant_id.clone(),
                    },
                )?;
            }
            Some(Awaited::Timer(definition)) if ctx.partition_id() == DEPLOYMENT_PARTITION => {
                // Checked when the resource was transformed: a failure here would be a bug.
                let schedule = match timers::schedule(ctx, process, definition, -1) {
                    Ok(schedule) => schedule,
                    Err(Failure::Incident(_, message)) => {
                        return Err(ProcessingError::Internal(format!(
                            "timer start event '{}': {message}",
                            element.id
                        )));
                    }
                    Err(Failure::Fatal(error)) => return Err(error),
                };
                let (due_date, repetitions) =
                    timers::first(&schedule, ctx.now()).map_err(|message| {
                        ProcessingError::Internal(format!(
                            "timer start event '{}': {message}",
                            element.id
                        ))
                    })?;
                let key = ctx.next_key()?;
                ctx.append_event(
                    key,
                    TimerIntent::Created,
                    TimerRecord {
                        element_instance_key: -1,
                        process_instance_key: -1,
                        due_date,
                        target_element_id: element.id.clone(),
                        repetitions,
                        process_definition_key: process.key,
                        tenant_id: process.tenant_id.clone(),
                    },
                )?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// A start event's message or signal name: static, or an expression evaluated without
/// variables. `None` when it gives no string (the transformation checks constant names).
fn constant_name(
    ctx: &ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    name: &ExprOrStatic<String>,
) -> Result<Option<String>, ProcessingError> {
    match name {
        ExprOrStatic::Static(name) => Ok(Some(name.clone())),
        ExprOrStatic::Expression(source) => {
            let Some(expression) = process.expression(source.id) else {
                return Ok(None);
            };
            let variables = ScopeVariables::new(ctx.state(), -1);
            match evaluate(expression, &variables, ctx.now(), ctx.source_position()) {
                Ok((beeline_feel::Value::String(name), _)) => Ok(Some(name.to_string())),
                Ok(_) | Err(crate::expression::EvalFailure::Incident(_)) => Ok(None),
                Err(crate::expression::EvalFailure::State(e)) => Err(e.into()),
            }
        }
    }
}
