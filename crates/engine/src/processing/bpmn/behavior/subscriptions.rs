//! What an element instance waits for while it is active: the timers, messages and signals
//! of its catch elements — an intermediate catch event or receive task itself, the boundary
//! events of an activity, the start events of a scope's event sub-processes, the events after
//! an event-based gateway. Opened when the instance is activated (all or none: an expression
//! that fails is an incident before anything is opened), closed when it leaves.

use beeline_bpmn::{
    Element, ElementData, ElementIndex, EventDefinition, ExprOrStatic, MessageRef, Process,
    SignalRef, TimerDefinition,
};
use beeline_protocol::intent::{
    MessageSubscriptionIntent, ProcessMessageSubscriptionIntent, SignalSubscriptionIntent,
    TimerIntent,
};
use beeline_protocol::partitioning::message_partition;
use beeline_protocol::value::{
    MessageSubscriptionRecord, ProcessMessageSubscriptionRecord, SignalSubscriptionRecord,
    TimerRecord,
};

use super::variables::eval;
use super::{events, timers};
use crate::error::ProcessingError;
use crate::expression::{EvalFailure, wrong_type};
use crate::model::{DeployedProcess, InstanceRole};
use crate::partitions;
use crate::processing::ProcessingContext;
use crate::processing::bpmn::{BpmnElementContext, ErrorType, Failure, Step};
use crate::state::values::SubscriptionLifecycle;

/// What a catch element waits for.
pub(crate) enum Awaited<'m> {
    Timer(&'m TimerDefinition),
    Message(&'m MessageRef),
    Signal(&'m SignalRef),
}

/// What `element` waits for, if it is a timer, message or signal catch element.
pub(crate) fn awaited(element: &Element) -> Option<Awaited<'_>> {
    if let ElementData::ReceiveTask(task) = &element.data {
        return Some(Awaited::Message(&task.message));
    }
    if matches!(
        element.data,
        ElementData::EndEvent(_) | ElementData::IntermediateThrowEvent(_)
    ) {
        return None;
    }
    match element.event_definition()? {
        EventDefinition::Timer(timer) => Some(Awaited::Timer(timer)),
        EventDefinition::Message(message) => message.message.as_ref().map(Awaited::Message),
        EventDefinition::Signal(signal) => Some(Awaited::Signal(&signal.signal)),
        _ => None,
    }
}

/// The catch elements an instance of `index` in `role` waits on while it is active (the
/// boundary events of a multi-instance activity are its body's; what the activity itself
/// waits for, its inner instances').
pub(crate) fn catch_elements(
    model: &Process,
    index: ElementIndex,
    role: InstanceRole,
) -> Vec<ElementIndex> {
    let element = &model[index];
    let mut found = Vec::new();
    if role.runs_element() {
        match &element.data {
            ElementData::IntermediateCatchEvent(_) | ElementData::ReceiveTask(_) => {
                found.push(index)
            }
            ElementData::EventBasedGateway => {
                found.extend(element.outgoing.iter().map(|&flow| model[flow].target));
            }
            _ => {}
        }
    }
    if role.has_boundary_and_flows() {
        found.extend(element.boundary_events.iter().copied());
    }
    if role.runs_element()
        && let Some(scope) = &element.scope
    {
        found.extend(
            scope
                .event_sub_processes
                .iter()
                .map(|&sub_process| events::start_of(model, sub_process)),
        );
    }
    found.retain(|&e| awaited(&model[e]).is_some());
    found
}

/// Whether a message correlated at `target` ends the wait (the element completes, or the
/// catch interrupts its scope).
fn interrupting(element: &Element) -> bool {
    match &element.data {
        ElementData::BoundaryEvent(boundary) => boundary.cancel_activity,
        ElementData::StartEvent(start) => start.interrupting,
        _ => true,
    }
}

/// A subscription, evaluated and ready to be opened.
enum Opening {
    Timer {
        target: String,
        due_date: i64,
        repetitions: i32,
    },
    Message {
        target: String,
        name: String,
        correlation_key: String,
        interrupting: bool,
    },
    Signal {
        target: String,
        name: String,
    },
}

/// Opens the subscriptions of the element instance being activated; an expression that
/// fails is an incident, and nothing is opened then.
pub(crate) fn open(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
    let targets = catch_elements(&bpmn.process.model, bpmn.index, bpmn.role);
    let mut openings = Vec::with_capacity(targets.len());
    for target in targets {
        openings.push(prepare(bpmn, target)?);
    }
    for opening in openings {
        write(bpmn, opening)?;
    }
    Ok(())
}

fn extract_value_error(message: String) -> Failure {
    Failure::Incident(ErrorType::ExtractValueError, message)
}

fn prepare(bpmn: &BpmnElementContext<'_, '_, '_>, target: ElementIndex) -> Step<Opening> {
    let process = bpmn.process.clone();
    let element = &process.model[target];
    let id = element.id.clone();
    Ok(match awaited(element) {
        Some(Awaited::Timer(definition)) => {
            let now = bpmn.ctx.now();
            let schedule = timers::schedule(bpmn.ctx, &process, definition, bpmn.key)?;
            let (due_date, repetitions) =
                timers::first(&schedule, now).map_err(extract_value_error)?;
            Opening::Timer {
                target: id,
                due_date,
                repetitions,
            }
        }
        Some(Awaited::Message(message)) => {
            let name = string_value(bpmn, &message.name, "message name")?;
            let Some(source) = &message.correlation_key else {
                return Err(extract_value_error(format!(
                    "Expected a correlation key for the message '{name}' of '{id}', but none is defined"
                )));
            };
            let correlation_key = correlation_key(bpmn, source)?;
            Opening::Message {
                interrupting: interrupting(element),
                target: id,
                name,
                correlation_key,
            }
        }
        Some(Awaited::Signal(signal)) => {
            let name = string_value(bpmn, &signal.name, "signal name")?;
            Opening::Signal { target: id, name }
        }
        None => {
            return Err(Failure::Fatal(ProcessingError::Internal(format!(
                "'{id}' is not a catch element"
            ))));
        }
    })
}

/// A static string, or an expression that must give one, evaluated in the element instance.
pub(crate) fn string_value(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    value: &ExprOrStatic<String>,
    what: &str,
) -> Step<String> {
    match value {
        ExprOrStatic::Static(text) => Ok(text.clone()),
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((beeline_feel::Value::String(text), _)) => Ok(text.to_string()),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                Err(extract_value_error(format!(
                    "Failed to evaluate the {what}: {}",
                    wrong_type(expression, "STRING", &other, &warnings)
                )))
            }
            Err(failure) => Err(Failure::of_evaluation(
                failure,
                ErrorType::ExtractValueError,
            )),
        },
    }
}

/// The correlation key: a string, or a number in its plain form (Zeebe's rule).
fn correlation_key(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    source: &beeline_bpmn::FeelSource,
) -> Step<String> {
    let text = source.text.trim_start_matches('=').trim();
    match eval(bpmn, source.id, bpmn.key, None) {
        Ok((beeline_feel::Value::String(key), _)) => Ok(key.to_string()),
        Ok((beeline_feel::Value::Number(number), _)) => Ok(number.to_string()),
        Ok((other, _)) => Err(extract_value_error(format!(
            "Failed to extract the correlation key for '{text}': The value must be either a string or a number, but was '{}'.",
            crate::expression::type_name(&other)
        ))),
        Err(EvalFailure::Incident(message)) => Err(extract_value_error(format!(
            "Failed to extract the correlation key for '{text}': {message}"
        ))),
        Err(EvalFailure::State(e)) => Err(e.into()),
    }
}

fn write(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    opening: Opening,
) -> Result<(), ProcessingError> {
    let key = bpmn.ctx.next_key()?;
    let record = &bpmn.record;
    match opening {
        Opening::Timer {
            target,
            due_date,
            repetitions,
        } => {
            let timer = TimerRecord {
                element_instance_key: bpmn.key,
                process_instance_key: record.process_instance_key,
                due_date,
                target_element_id: target,
                repetitions,
                process_definition_key: record.process_definition_key,
                tenant_id: record.tenant_id.clone(),
            };
            bpmn.ctx.append_event(key, TimerIntent::Created, timer)?;
        }
        Opening::Message {
            target,
            name,
            correlation_key,
            interrupting,
        } => {
            let partition = message_partition(&correlation_key, bpmn.ctx.partition_count());
            let subscription = ProcessMessageSubscriptionRecord {
                subscription_partition_id: i32::from(partition),
                process_instance_key: record.process_instance_key,
                element_instance_key: bpmn.key,
                message_key: -1,
                message_name: name,
                variables: Vec::new(),
                interrupting,
                bpmn_process_id: record.bpmn_process_id.clone(),
                correlation_key,
                element_id: target,
                tenant_id: record.tenant_id.clone(),
                process_definition_key: record.process_definition_key,
            };
            bpmn.ctx.append_event(
                key,
                ProcessMessageSubscriptionIntent::Creating,
                subscription.clone(),
            )?;
            send_to_message_partition(bpmn.ctx, &subscription, MessageSubscriptionIntent::Create)?;
        }
        Opening::Signal { target, name } => {
            let subscription = SignalSubscriptionRecord {
                process_definition_key: record.process_definition_key,
                bpmn_process_id: record.bpmn_process_id.clone(),
                catch_event_id: target,
                catch_event_instance_key: bpmn.key,
                signal_name: name,
                tenant_id: record.tenant_id.clone(),
            };
            bpmn.ctx
                .append_event(key, SignalSubscriptionIntent::Created, subscription)?;
        }
    }
    Ok(())
}

/// The message partition's view of a subscription.
pub(crate) fn message_subscription(
    subscription: &ProcessMessageSubscriptionRecord,
) -> MessageSubscriptionRecord {
    MessageSubscriptionRecord {
        process_instance_key: subscription.process_instance_key,
        element_instance_key: subscription.element_instance_key,
        bpmn_process_id: subscription.bpmn_process_id.clone(),
        message_key: -1,
        message_name: subscription.message_name.clone(),
        correlation_key: subscription.correlation_key.clone(),
        interrupting: subscription.interrupting,
        variables: Vec::new(),
        tenant_id: subscription.tenant_id.clone(),
        process_definition_key: subscription.process_definition_key,
    }
}

/// Sends `intent` (CREATE or DELETE) for the subscription to the message's partition.
pub(crate) fn send_to_message_partition(
    ctx: &mut ProcessingContext<'_, '_>,
    subscription: &ProcessMessageSubscriptionRecord,
    intent: MessageSubscriptionIntent,
) -> Result<(), ProcessingError> {
    let partition = partitions::from_id(
        subscription.subscription_partition_id,
        "the message subscription's partition",
    )?;
    ctx.send(partition, -1, intent, message_subscription(subscription));
    Ok(())
}

/// Closes the subscriptions of the element instance `element_instance_key` whose catch
/// element `keep` does not keep: timers are canceled, signal subscriptions deleted, message
/// subscriptions asked to close on the message's partition.
pub(crate) fn close(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    element_instance_key: i64,
    keep: impl Fn(ElementIndex) -> bool,
) -> Result<(), ProcessingError> {
    let kept = |target: &str| process.element(target).is_some_and(&keep);
    for (key, timer) in ctx.state().timers().of_scope(element_instance_key)? {
        if !kept(&timer.target_element_id) {
            ctx.append_event(key, TimerIntent::Canceled, timer)?;
        }
    }
    for stored in ctx
        .state()
        .process_message_subscriptions()
        .of_element_instance(element_instance_key)?
    {
        let record = stored.record();
        if stored.lifecycle()? == SubscriptionLifecycle::Deleting || kept(&record.element_id) {
            continue;
        }
        ctx.append_event(
            stored.key,
            ProcessMessageSubscriptionIntent::Deleting,
            record.clone(),
        )?;
        send_to_message_partition(ctx, &record, MessageSubscriptionIntent::Delete)?;
    }
    for (key, subscription) in ctx
        .state()
        .signal_subscriptions()
        .of_scope(element_instance_key)?
    {
        if !kept(&subscription.catch_event_id) {
            ctx.append_event(key, SignalSubscriptionIntent::Deleted, subscription)?;
        }
    }
    Ok(())
}

/// Closes every subscription of the element instance, an instance of `index` in `role`. An
/// element that waits on no catch element has none, and its instance is not looked up at all.
pub(crate) fn close_all(
    ctx: &mut ProcessingContext<'_, '_>,
    process: &DeployedProcess,
    index: ElementIndex,
    role: InstanceRole,
    element_instance_key: i64,
) -> Result<(), ProcessingError> {
    if catch_elements(&process.model, index, role).is_empty() {
        return Ok(());
    }
    close(ctx, process, element_instance_key, |_| false)
}
