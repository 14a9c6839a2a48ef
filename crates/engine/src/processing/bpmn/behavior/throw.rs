//! Throwing events: errors (caught by the nearest catch, an incident when nothing catches
//! them), escalations (caught or not) and signals (broadcast to every partition).

use beeline_bpmn::{Element, ErrorEventDefinition, EscalationEventDefinition, ExprOrStatic};
use beeline_protocol::intent::{EscalationIntent, ProcessInstanceIntent as PI, SignalIntent};
use beeline_protocol::value::{EscalationRecord, SignalRecord};
use serde_json::Value as Json;

use super::events::{self, Thrown};
use super::subscriptions;
use super::variables::{Document, eval};
use crate::expression::wrong_type;
use crate::processing::bpmn::{BpmnElementContext, ErrorType, Failure, Step};
use crate::state::document;

/// The code of an error or escalation a throw event throws.
fn thrown_code(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    code: Option<&ExprOrStatic<String>>,
) -> Step<String> {
    match code {
        None => Ok(String::new()),
        Some(ExprOrStatic::Static(code)) => Ok(code.clone()),
        Some(ExprOrStatic::Expression(source)) => match eval(bpmn, source.id, bpmn.key, None) {
            Ok((beeline_feel::Value::String(code), _)) => Ok(code.to_string()),
            Ok((other, warnings)) => {
                let expression = &bpmn.process.expressions[source.id.index()];
                Err(Failure::Incident(
                    ErrorType::ExtractValueError,
                    wrong_type(expression, "STRING", &other, &warnings),
                ))
            }
            Err(failure) => Err(Failure::of_evaluation(
                failure,
                ErrorType::ExtractValueError,
            )),
        },
    }
}

/// The variables an error hands its catch event: `errorCode` and `errorMessage` when the
/// catch event maps its output (Zeebe offers them to output mappings only), plus `extra`.
pub(crate) fn error_variables(
    catch_element: &Element,
    code: &str,
    message: &str,
    extra: Document,
) -> Document {
    let mut variables = extra;
    if !catch_element.io_mapping.outputs.is_empty() {
        variables.set("errorCode", &Json::String(code.to_string()));
        variables.set("errorMessage", &Json::String(message.to_string()));
    }
    variables
}

/// An error end event: thrown to the nearest catch, or an incident when nothing catches it.
pub(crate) fn throw_error(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    definition: &ErrorEventDefinition,
) -> Step<()> {
    let code = thrown_code(
        bpmn,
        definition
            .error
            .as_ref()
            .and_then(|e| e.error_code.as_ref()),
    )?;
    let process = bpmn.process.clone();
    let Some((process, catch)) =
        events::find_catch(bpmn.ctx, &process, bpmn.key, Thrown::Error(&code))?
    else {
        return Err(Failure::Incident(
            ErrorType::UnhandledErrorEvent,
            format!(
                "Expected to throw an error event with the code '{code}', but it was not caught. No error events are available in the scope."
            ),
        ));
    };
    bpmn.write(PI::ElementActivated)?;
    let variables = error_variables(
        catch.element(&process.model),
        &code,
        "",
        Document::default(),
    );
    // The end event is terminated with what the catch interrupts.
    events::trigger(bpmn.ctx, &process, &catch, &variables)?;
    Ok(())
}

/// An escalation throw or end event: an interrupting catch ends it with its scope; otherwise
/// it completes and the process goes on (an uncaught escalation is no incident).
pub(crate) fn throw_escalation(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    definition: &EscalationEventDefinition,
) -> Step<()> {
    let code = thrown_code(
        bpmn,
        definition
            .escalation
            .as_ref()
            .and_then(|e| e.escalation_code.as_ref()),
    )?;
    let process = bpmn.process.clone();
    let catch = events::find_catch(bpmn.ctx, &process, bpmn.key, Thrown::Escalation(&code))?;
    bpmn.write(PI::ElementActivated)?;
    let key = bpmn.ctx.next_key()?;
    let escalation = EscalationRecord {
        process_instance_key: bpmn.record.process_instance_key,
        escalation_code: code,
        throw_element_id: bpmn.record.element_id.clone(),
        catch_element_id: catch
            .as_ref()
            .map(|(process, c)| c.element(&process.model).id.clone())
            .unwrap_or_default(),
    };
    match catch {
        Some((process, catch)) => {
            bpmn.ctx
                .append_event(key, EscalationIntent::Escalated, escalation)?;
            let interrupting = catch.interrupting();
            events::trigger(bpmn.ctx, &process, &catch, &Document::default())?;
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
pub(crate) fn throw_signal(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    signal: &beeline_bpmn::SignalRef,
) -> Step<()> {
    let name = subscriptions::string_value(bpmn, &signal.name, "signal name")?;
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
    bpmn.pass_through()?;
    Ok(())
}
