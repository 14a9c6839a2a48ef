//! What each kind of element does when it is activated, completed and terminated.

use beeline_bpmn::{
    BusinessRuleTask, ElementData, EventDefinition, ExprOrStatic, ScriptTask, ThrowEvent,
};
use beeline_protocol::intent::{
    DecisionEvaluationIntent, EscalationIntent, IncidentIntent, ProcessEventIntent,
    ProcessInstanceIntent as PI, ProcessInstanceResultIntent, SignalIntent,
};
use beeline_protocol::value::{EscalationRecord, ProcessInstanceResultRecord, SignalRecord};
use beeline_protocol::{Intent, Record};
use serde_json::{Map, Value as Json};

use super::gateways::{self, Choice};
use super::variables::{self, eval};
use super::{Bpmn, ErrorType, Step, events, flow, jobs, lifecycle, subscriptions};
use crate::error::ProcessingError;
use crate::expression::{EvalFailure, ScopeVariables, wrong_type};
use crate::model::can_be_triggered;
use crate::processing::decision_evaluation::evaluate_decision;
use crate::processing::message::correlate;
use crate::state::document;

/// `ACTIVATE_ELEMENT`: ELEMENT_ACTIVATING, input mappings, what the kind does, and
/// ELEMENT_ACTIVATED (unless an incident stops it, or the element waits for a job).
pub(super) fn activate(bpmn: &mut Bpmn<'_, '_, '_>) -> Result<(), ProcessingError> {
    match bpmn.instance()? {
        None => {
            if !flow_scope_accepts_children(bpmn)? {
                // The scope ended (a terminate end event) while this token was on its way.
                return Ok(());
            }
            bpmn.write(PI::ElementActivating)?;
            take_trigger(bpmn)?;
        }
        // Resolving an incident sends the command again: continue after ELEMENT_ACTIVATING.
        Some(instance) if instance.state == lifecycle::ACTIVATING => {}
        Some(_) => {
            bpmn.reject_state("activate");
            return Ok(());
        }
    }
    // The deployed process, shared: the element is borrowed from it, not copied.
    let process = bpmn.process.clone();
    let element = &process.model[bpmn.index];
    if element.is_activity()
        && !element.io_mapping.inputs.is_empty()
        && let Err(message) = variables::apply_input_mappings(bpmn)?
    {
        return bpmn.incident(ErrorType::IoMappingError, message);
    }
    // An element started by the event it catches (a boundary event, the event after an
    // event-based gateway, an event sub-process's start) does not wait for it again.
    let triggered = bpmn
        .instance()?
        .is_some_and(|i| i.completion_variables.is_some());
    // A job worker opens them once its job properties are evaluated (a failure there is an
    // incident that must not leave them open, as in Zeebe).
    let job_worker = element.job_worker();
    if !triggered
        && job_worker.is_none()
        && let Err(message) = subscriptions::open(bpmn)?
    {
        return bpmn.incident(ErrorType::ExtractValueError, message);
    }
    let waits_itself = match &element.data {
        ElementData::ReceiveTask(_) | ElementData::EventBasedGateway => true,
        ElementData::IntermediateCatchEvent(_) => subscriptions::awaited(element).is_some(),
        _ => false,
    };
    if waits_itself && !triggered {
        // Completed by the event (PROCESS_EVENT TRIGGERING and COMPLETE_ELEMENT).
        bpmn.write(PI::ElementActivated)?;
        return Ok(());
    }
    match &element.data {
        ElementData::Process => {
            bpmn.write(PI::ElementActivated)?;
            let process = bpmn.process.clone();
            let started_at = match process.started_by_events() {
                true => events::triggered_start(bpmn.ctx, &process, bpmn.key)?,
                false => None,
            };
            if let Some((key, start)) = started_at {
                let record = bpmn.record_of(start, bpmn.key);
                bpmn.ctx.append_command(key, PI::ActivateElement, record);
                return Ok(());
            }
            match element.scope.as_ref().and_then(|s| s.none_start_event) {
                Some(start) => bpmn.activate_element(start, bpmn.key),
                None => {
                    // Nothing to start: an empty process completes at once.
                    bpmn.complete_self();
                    Ok(())
                }
            }
        }
        ElementData::SubProcess => {
            bpmn.write(PI::ElementActivated)?;
            match element.scope.as_ref().and_then(|s| s.none_start_event) {
                Some(start) => bpmn.activate_element(start, bpmn.key),
                None => {
                    // Nothing to start: an empty scope completes at once.
                    bpmn.complete_self();
                    Ok(())
                }
            }
        }
        ElementData::EventSubProcess => {
            bpmn.write(PI::ElementActivated)?;
            let start = events::start_of(&bpmn.process.model, bpmn.index);
            let start_id = bpmn.process.model[start].id.clone();
            let waiting = bpmn
                .ctx
                .state()
                .event_triggers()
                .of_scope(bpmn.record.flow_scope_key)?
                .into_iter()
                .find(|(_, event)| event.target_element_id == start_id);
            match waiting {
                Some((key, _)) => {
                    let process = bpmn.process.clone();
                    let record = bpmn.record.clone();
                    events::activate(bpmn.ctx, &process, key, start, bpmn.key, &record);
                    Ok(())
                }
                None => Err(ProcessingError::Internal(format!(
                    "event sub-process '{}' started without an event",
                    bpmn.record.element_id
                ))),
            }
        }
        ElementData::EndEvent(ThrowEvent {
            event: EventDefinition::Error(definition),
        }) => throw_error_event(bpmn, definition),
        ElementData::EndEvent(ThrowEvent {
            event: EventDefinition::Escalation(definition),
        })
        | ElementData::IntermediateThrowEvent(ThrowEvent {
            event: EventDefinition::Escalation(definition),
        }) => throw_escalation_event(bpmn, definition),
        ElementData::EndEvent(ThrowEvent {
            event: EventDefinition::Signal(definition),
        })
        | ElementData::IntermediateThrowEvent(ThrowEvent {
            event: EventDefinition::Signal(definition),
        }) => throw_signal(bpmn, &definition.signal),
        ElementData::ExclusiveGateway(_) => match gateways::exclusive(bpmn)? {
            Choice::Take(flows) => pass_through_gateway(bpmn, &flows),
            Choice::Incident(message) => bpmn.incident(ErrorType::ConditionError, message),
        },
        ElementData::InclusiveGateway(_) => match gateways::inclusive(bpmn)? {
            Choice::Take(flows) => pass_through_gateway(bpmn, &flows),
            Choice::Incident(message) => bpmn.incident(ErrorType::ConditionError, message),
        },
        ElementData::ParallelGateway => pass_through_gateway(bpmn, &element.outgoing),
        _ => match job_worker {
            Some(properties) => {
                let (job_type, retries) = match jobs::evaluate(bpmn, properties)? {
                    Ok(evaluated) => evaluated,
                    Err(message) => return bpmn.incident(ErrorType::ExtractValueError, message),
                };
                if !triggered && let Err(message) = subscriptions::open(bpmn)? {
                    return bpmn.incident(ErrorType::ExtractValueError, message);
                }
                bpmn.write(PI::ElementActivated)?;
                jobs::create(bpmn, properties, job_type, retries)
            }
            None => {
                // Start, none throw and end events, link events, triggered boundary events,
                // undefined and manual tasks, and script tasks (evaluated on completion) pass
                // through.
                bpmn.write(PI::ElementActivated)?;
                bpmn.complete_self();
                Ok(())
            }
        },
    }
}

/// Whether the flow scope is active and can take a new child.
fn flow_scope_accepts_children(bpmn: &Bpmn<'_, '_, '_>) -> Result<bool, ProcessingError> {
    let scope = bpmn.record.flow_scope_key;
    if scope <= 0 {
        return Ok(true);
    }
    let Some(instance) = bpmn.ctx.state().element_instances().get(scope)? else {
        return Ok(false);
    };
    if instance.state != lifecycle::ACTIVATED {
        return Ok(false);
    }
    if !instance.interrupted {
        return Ok(true);
    }
    // An interrupted scope only takes the event sub-process that interrupted it.
    if matches!(bpmn.element().data, ElementData::EventSubProcess) {
        let start = &bpmn.process.model[events::start_of(&bpmn.process.model, bpmn.index)];
        return Ok(bpmn
            .ctx
            .state()
            .event_triggers()
            .of_scope(scope)?
            .iter()
            .any(|(_, event)| event.target_element_id == start.id));
    }
    Ok(false)
}

/// Takes the event this instance catches, if one waits for it (PROCESS_EVENT TRIGGERED): its
/// variables become what the instance completes with.
fn take_trigger(bpmn: &mut Bpmn<'_, '_, '_>) -> Result<bool, ProcessingError> {
    if !can_be_triggered(bpmn.element()) {
        return Ok(false);
    }
    let Some(event) = bpmn.ctx.state().event_triggers().get(bpmn.key)? else {
        return Ok(false);
    };
    bpmn.ctx
        .append_event(bpmn.key, ProcessEventIntent::Triggered, event)?;
    Ok(true)
}

/// The code of an error or escalation a throw event throws.
fn thrown_code(bpmn: &Bpmn<'_, '_, '_>, code: Option<&ExprOrStatic<String>>) -> Step<String> {
    match code {
        None => Ok(Ok(String::new())),
        Some(ExprOrStatic::Static(code)) => Ok(Ok(code.clone())),
        Some(ExprOrStatic::Expression(source)) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((beeline_feel::Value::String(code), _)) => Ok(Ok(code.to_string())),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                Ok(Err(wrong_type(expression, "STRING", &other, &warnings)))
            }
            Err(EvalFailure::Incident(message)) => Ok(Err(message)),
            Err(EvalFailure::State(e)) => Err(e.into()),
        },
    }
}

/// The variables an error hands its catch event: `errorCode` and `errorMessage` when the
/// catch event maps its output (Zeebe offers them to output mappings only), plus `extra`.
pub(crate) fn error_variables(
    catch_element: &beeline_bpmn::Element,
    code: &str,
    message: &str,
    extra: variables::Document,
) -> variables::Document {
    let mut variables = extra;
    if !catch_element.io_mapping.outputs.is_empty() {
        variables.set("errorCode", &Json::String(code.to_string()));
        variables.set("errorMessage", &Json::String(message.to_string()));
    }
    variables
}

/// An error end event: thrown to the nearest catch, or an incident when nothing catches it.
fn throw_error_event(
    bpmn: &mut Bpmn<'_, '_, '_>,
    definition: &beeline_bpmn::ErrorEventDefinition,
) -> Result<(), ProcessingError> {
    let code = match thrown_code(
        bpmn,
        definition
            .error
            .as_ref()
            .and_then(|e| e.error_code.as_ref()),
    )? {
        Ok(code) => code,
        Err(message) => return bpmn.incident(ErrorType::ExtractValueError, message),
    };
    let process = bpmn.process.clone();
    let Some(catch) =
        events::find_catch(bpmn.ctx, &process, bpmn.key, events::Thrown::Error(&code))?
    else {
        return bpmn.incident(
            ErrorType::UnhandledErrorEvent,
            format!(
                "Expected to throw an error event with the code '{code}', but it was not caught. No error events are available in the scope."
            ),
        );
    };
    bpmn.write(PI::ElementActivated)?;
    let variables = error_variables(
        catch.element(&process.model),
        &code,
        "",
        variables::Document::default(),
    );
    // The end event is terminated with what the catch interrupts.
    events::trigger(bpmn.ctx, &process, &catch, &variables)
}

/// An escalation throw or end event: an interrupting catch ends it with its scope; otherwise
/// it completes and the process goes on (an uncaught escalation is no incident).
fn throw_escalation_event(
    bpmn: &mut Bpmn<'_, '_, '_>,
    definition: &beeline_bpmn::EscalationEventDefinition,
) -> Result<(), ProcessingError> {
    let code = match thrown_code(
        bpmn,
        definition
            .escalation
            .as_ref()
            .and_then(|e| e.escalation_code.as_ref()),
    )? {
        Ok(code) => code,
        Err(message) => return bpmn.incident(ErrorType::ExtractValueError, message),
    };
    let process = bpmn.process.clone();
    let catch = events::find_catch(
        bpmn.ctx,
        &process,
        bpmn.key,
        events::Thrown::Escalation(&code),
    )?;
    bpmn.write(PI::ElementActivated)?;
    let key = bpmn.ctx.next_key()?;
    let escalation = EscalationRecord {
        process_instance_key: bpmn.record.process_instance_key,
        escalation_code: code,
        throw_element_id: bpmn.record.element_id.clone(),
        catch_element_id: catch
            .as_ref()
            .map(|c| c.element(&process.model).id.clone())
            .unwrap_or_default(),
    };
    match catch {
        Some(catch) => {
            bpmn.ctx
                .append_event(key, EscalationIntent::Escalated, escalation)?;
            let interrupting = catch.interrupting();
            events::trigger(bpmn.ctx, &process, &catch, &variables::Document::default())?;
            if !interrupting {
                bpmn.complete_self();
            }
        }
        None => {
            bpmn.ctx
                .append_event(key, EscalationIntent::NotEscalated, escalation)?;
            bpmn.complete_self();
        }
    }
    Ok(())
}

/// A signal throw or end event broadcasts its signal, with the event's local variables (its
/// input mappings), and goes on at once.
fn throw_signal(
    bpmn: &mut Bpmn<'_, '_, '_>,
    signal: &beeline_bpmn::SignalRef,
) -> Result<(), ProcessingError> {
    let name = match subscriptions::string_value(bpmn, &signal.name, "signal name")? {
        Ok(name) => name,
        Err(message) => return bpmn.incident(ErrorType::ExtractValueError, message),
    };
    let local = bpmn.ctx.state().variables().local(bpmn.key)?;
    bpmn.ctx.append_command(
        -1,
        SignalIntent::Broadcast,
        SignalRecord {
            signal_name: name,
            variables: document(local.iter().map(|(n, v)| (n.as_str(), v.value.as_str()))),
            tenant_id: bpmn.record.tenant_id.clone(),
        },
    );
    bpmn.write(PI::ElementActivated)?;
    bpmn.complete_self();
    Ok(())
}

/// Gateways go through their whole lifecycle at once and take the chosen flows.
fn pass_through_gateway(
    bpmn: &mut Bpmn<'_, '_, '_>,
    flows: &[beeline_bpmn::SequenceFlowIndex],
) -> Result<(), ProcessingError> {
    bpmn.write(PI::ElementActivated)?;
    bpmn.write(PI::ElementCompleting)?;
    bpmn.write(PI::ElementCompleted)?;
    if flows.is_empty() {
        path_ended(bpmn)
    } else {
        flow::take(bpmn, flows)
    }
}

/// A token ended here (no outgoing flow): the scope may be done, and inclusive joins that
/// waited for this token may go on without it.
fn path_ended(bpmn: &mut Bpmn<'_, '_, '_>) -> Result<(), ProcessingError> {
    let scope = bpmn.record.flow_scope_key;
    flow::complete_scope_if_done(bpmn)?;
    flow::recheck_inclusive_joins(bpmn, scope)
}

/// The result of a script task's expression, as the variables it completes with.
fn script_result(bpmn: &Bpmn<'_, '_, '_>) -> Step<Option<Map<String, Json>>> {
    let ElementData::ScriptTask(ScriptTask::Script(script)) = &bpmn.element().data else {
        return Ok(Ok(None));
    };
    match eval(bpmn, script.expression.id, bpmn.key, None) {
        Ok((value, _)) => {
            let mut result = Map::new();
            result.insert(script.result_variable.clone(), value.to_json());
            Ok(Ok(Some(result)))
        }
        Err(EvalFailure::Incident(message)) => Ok(Err(message)),
        Err(EvalFailure::State(e)) => Err(e.into()),
    }
}

/// The variables a business rule task completes with, or its incident: (type, message).
type DecisionStep = Result<Result<Option<Map<String, Json>>, (ErrorType, String)>, ProcessingError>;

/// A business rule task's decision, evaluated (DECISION_EVALUATION EVALUATED or FAILED), as
/// the variables it completes with; or the incident: (type, message).
fn decision_result(bpmn: &mut Bpmn<'_, '_, '_>) -> DecisionStep {
    let ElementData::BusinessRuleTask(BusinessRuleTask::CalledDecision(called)) =
        bpmn.element().data.clone()
    else {
        return Ok(Ok(None));
    };
    let decision_id = match &called.decision_id {
        ExprOrStatic::Static(id) => id.clone(),
        ExprOrStatic::Expression(source) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((beeline_feel::Value::String(id), _)) => id.to_string(),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                return Ok(Err((
                    ErrorType::ExtractValueError,
                    wrong_type(expression, "STRING", &other, &warnings),
                )));
            }
            Err(EvalFailure::Incident(message)) => {
                return Ok(Err((ErrorType::ExtractValueError, message)));
            }
            Err(EvalFailure::State(e)) => return Err(e.into()),
        },
    };
    let decision = match bpmn.ctx.state().decisions().latest(&decision_id)? {
        Some((_, key)) => bpmn.ctx.state().decisions().get(key)?,
        None => None,
    };
    let Some(decision) = decision else {
        return Ok(Err((
            ErrorType::CalledDecisionError,
            format!(
                "Expected to evaluate decision '{decision_id}', but no decision found for id '{decision_id}'"
            ),
        )));
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
        return Ok(Err((ErrorType::DecisionEvaluationError, message)));
    }
    let output: Json = serde_json::from_str(&evaluated.decision_output).unwrap_or(Json::Null);
    bpmn.ctx
        .append_event(key, DecisionEvaluationIntent::Evaluated, evaluated)?;
    let mut result = Map::new();
    result.insert(called.result_variable.clone(), output);
    Ok(Ok(Some(result)))
}

/// `COMPLETE_ELEMENT`: ELEMENT_COMPLETING, output mappings, ELEMENT_COMPLETED, then the
/// outgoing flows (or the scope's completion, when there are none).
pub(super) fn complete(bpmn: &mut Bpmn<'_, '_, '_>) -> Result<(), ProcessingError> {
    if bpmn
        .instance()?
        .is_some_and(|i| i.state == lifecycle::ACTIVATED)
    {
        take_trigger(bpmn)?;
    }
    let Some(instance) = bpmn.instance()? else {
        // Gone already (terminated meanwhile): nothing to complete.
        return Ok(());
    };
    let mut completion = instance
        .completion_variables
        .as_ref()
        .map(|bytes| variables::Document::parse(bytes).unwrap_or_default());
    match instance.state {
        lifecycle::ACTIVATED => {
            match script_result(bpmn)? {
                Ok(Some(variables)) => completion = Some(variables::Document::from_map(&variables)),
                Ok(None) => {}
                Err(message) => return bpmn.incident(ErrorType::ExtractValueError, message),
            }
            match decision_result(bpmn)? {
                Ok(Some(variables)) => completion = Some(variables::Document::from_map(&variables)),
                Ok(None) => {}
                Err((error_type, message)) => return bpmn.incident(error_type, message),
            }
            let process = bpmn.process.clone();
            subscriptions::close_all(bpmn.ctx, &process, bpmn.index, bpmn.key)?;
            bpmn.write(PI::ElementCompleting)?;
        }
        lifecycle::COMPLETING => {
            if let Ok(Some(variables)) = script_result(bpmn)? {
                completion = Some(variables::Document::from_map(&variables));
            }
        }
        _ => {
            bpmn.reject_state("complete");
            return Ok(());
        }
    }
    if let Err(message) = variables::apply_output_mappings(bpmn, completion.as_ref())? {
        return bpmn.incident(ErrorType::IoMappingError, message);
    }
    let process = bpmn.process.clone();
    let element = &process.model[bpmn.index];
    if matches!(element.data, ElementData::Process) {
        return complete_process(bpmn);
    }
    let terminates_scope = matches!(element.event_definition(), Some(EventDefinition::Terminate))
        && matches!(element.data, ElementData::EndEvent(_));
    let siblings = if terminates_scope {
        let scope = bpmn.record.flow_scope_key;
        let mut siblings = Vec::new();
        for child in bpmn.ctx.state().element_instances().children(scope)? {
            if child != bpmn.key
                && let Some(sibling) = bpmn.ctx.state().element_instances().get(child)?
            {
                siblings.push(sibling);
            }
        }
        siblings
    } else {
        Vec::new()
    };
    bpmn.write(PI::ElementCompleted)?;
    if terminates_scope {
        if siblings.is_empty() {
            flow::after_terminated(bpmn)?;
        }
        for sibling in siblings {
            bpmn.ctx
                .append_command(sibling.key, PI::TerminateElement, sibling.record());
        }
        return Ok(());
    }
    if let Some(EventDefinition::Link(link)) = element.event_definition()
        && let Some(catch) = link.catch_event
        && matches!(element.data, ElementData::IntermediateThrowEvent(_))
    {
        // A link throw event continues at its catch event, as if a flow led there.
        return bpmn.activate_element(catch, bpmn.record.flow_scope_key);
    }
    if matches!(element.data, ElementData::EventBasedGateway) {
        return continue_after_event_gateway(bpmn);
    }
    if element.outgoing.is_empty() {
        path_ended(bpmn)
    } else {
        flow::take(bpmn, &element.outgoing)
    }
}

/// An event-based gateway completed because one of its events came: the flow to that event
/// is taken, and the event starts with the event's variables (under the trigger's key).
fn continue_after_event_gateway(bpmn: &mut Bpmn<'_, '_, '_>) -> Result<(), ProcessingError> {
    let Some((key, event)) = bpmn
        .ctx
        .state()
        .event_triggers()
        .of_scope(bpmn.key)?
        .into_iter()
        .next()
    else {
        return Err(ProcessingError::Internal(format!(
            "event-based gateway '{}' completed without an event",
            bpmn.record.element_id
        )));
    };
    let model = &bpmn.process.model;
    let Some(flow) = bpmn
        .element()
        .outgoing
        .iter()
        .copied()
        .find(|&f| model[model[f].target].id == event.target_element_id)
    else {
        return Err(ProcessingError::Internal(format!(
            "event-based gateway '{}' has no flow to '{}'",
            bpmn.record.element_id, event.target_element_id
        )));
    };
    flow::take_to(bpmn, flow, key)
}

/// The process instance completes: answer a creation that waits for its result.
fn complete_process(bpmn: &mut Bpmn<'_, '_, '_>) -> Result<(), ProcessingError> {
    let awaiting = bpmn
        .ctx
        .state()
        .transient()
        .take_awaiting(bpmn.record.process_instance_key);
    let result = match &awaiting {
        Some(awaiting) => Some(result_variables(bpmn, &awaiting.fetch_variables)?),
        None => None,
    };
    let held = bpmn.ctx.state().messages().correlation_key_of(bpmn.key)?;
    bpmn.write(PI::ElementCompleted)?;
    start_next_buffered(bpmn, held)?;
    if let (Some(awaiting), Some(variables)) = (awaiting, result) {
        let answer = Record::event(
            bpmn.record.process_instance_key,
            ProcessInstanceResultIntent::Completed,
            ProcessInstanceResultRecord {
                bpmn_process_id: bpmn.record.bpmn_process_id.clone(),
                process_definition_key: bpmn.record.process_definition_key,
                version: bpmn.record.version,
                variables,
                process_instance_key: bpmn.record.process_instance_key,
                tenant_id: bpmn.record.tenant_id.clone(),
                tags: Vec::new(),
            },
        );
        bpmn.ctx.answer(awaiting.request, answer);
    }
    Ok(())
}

/// A process instance that a message started ended and freed its correlation key: the next
/// buffered message with that key may start the next instance.
fn start_next_buffered(
    bpmn: &mut Bpmn<'_, '_, '_>,
    held: Option<(String, String)>,
) -> Result<(), ProcessingError> {
    match held {
        Some((process_id, correlation_key)) => {
            correlate::start_next_buffered(bpmn.ctx, &process_id, &correlation_key)
        }
        None => Ok(()),
    }
}

/// The instance's variables (only `fetch` when given), as a JSON object.
fn result_variables(bpmn: &Bpmn<'_, '_, '_>, fetch: &[String]) -> Result<Vec<u8>, ProcessingError> {
    let variables = bpmn.ctx.state().variables();
    let scope = bpmn.record.process_instance_key;
    let found = if fetch.is_empty() {
        variables.local(scope)?
    } else {
        let mut found = Vec::new();
        for name in fetch {
            if let Some(variable) = variables.get_local(scope, name)? {
                found.push((name.clone(), variable));
            }
        }
        found
    };
    Ok(document(
        found.iter().map(|(n, v)| (n.as_str(), v.value.as_str())),
    ))
}

/// `TERMINATE_ELEMENT`: ELEMENT_TERMINATING, cancel the job and resolve the incidents, end
/// the children first, then ELEMENT_TERMINATED.
pub(super) fn terminate(bpmn: &mut Bpmn<'_, '_, '_>) -> Result<(), ProcessingError> {
    let Some(instance) = bpmn.instance()? else {
        return Ok(());
    };
    if instance.state != lifecycle::TERMINATING {
        bpmn.write(PI::ElementTerminating)?;
        jobs::cancel(bpmn.ctx, instance.job_key)?;
        let process = bpmn.process.clone();
        subscriptions::close_all(bpmn.ctx, &process, bpmn.index, bpmn.key)?;
        if let Some(incident) = bpmn.ctx.state().incidents().of_element_instance(bpmn.key)?
            && let Some(record) = bpmn.ctx.state().incidents().get(incident)?
        {
            bpmn.ctx
                .append_event(incident, IncidentIntent::Resolved, record)?;
        }
        let children = bpmn.ctx.state().element_instances().children(bpmn.key)?;
        if !children.is_empty() {
            for child in children {
                if let Some(child) = bpmn.ctx.state().element_instances().get(child)?
                    && child.state != lifecycle::TERMINATING
                {
                    bpmn.ctx
                        .append_command(child.key, PI::TerminateElement, child.record());
                }
            }
            return Ok(());
        }
    } else if instance.active_children > 0 {
        return Ok(());
    }
    let is_process = matches!(bpmn.element().data, ElementData::Process);
    if is_process
        && let Some(awaiting) = bpmn
            .ctx
            .state()
            .transient()
            .take_awaiting(bpmn.record.process_instance_key)
    {
        // The instance will never complete: the waiting request learns it was canceled.
        let mut rejection = Record::rejection(
            bpmn.command,
            beeline_protocol::RejectionType::InvalidState,
            format!(
                "Expected to complete process instance with key '{}', but it was terminated",
                bpmn.record.process_instance_key
            ),
        );
        rejection.intent = Intent::from(
            beeline_protocol::intent::ProcessInstanceCreationIntent::CreateWithAwaitingResult,
        );
        rejection.value = beeline_protocol::value::ProcessInstanceCreationRecord {
            bpmn_process_id: bpmn.record.bpmn_process_id.clone(),
            process_definition_key: bpmn.record.process_definition_key,
            version: bpmn.record.version,
            process_instance_key: bpmn.record.process_instance_key,
            ..Default::default()
        }
        .into();
        bpmn.ctx.answer(awaiting.request, rejection);
    }
    let held = if is_process {
        bpmn.ctx.state().messages().correlation_key_of(bpmn.key)?
    } else {
        None
    };
    bpmn.write(PI::ElementTerminated)?;
    if is_process {
        return start_next_buffered(bpmn, held);
    }
    let process = bpmn.process.clone();
    if events::start_waiting_boundary(bpmn.ctx, &process, &instance)? {
        return Ok(());
    }
    flow::after_terminated(bpmn)
}
