//! The multi-instance body (Zeebe's `MultiInstanceBodyProcessor`): a multi-instance activity
//! runs as a body that holds the activity's boundary events and outgoing flows, and one inner
//! instance of the activity per item of its input collection, one after another (sequential)
//! or all at once (parallel, activated a batch command at a time: `process_instance_batch`).
//!
//! The input collection is evaluated once, when the body is activated (MULTI_INSTANCE
//! INPUT_COLLECTION_EVALUATED), and must be a list. Each inner instance gets its item
//! (`inputElement`) and `loopCounter` as local variables; when it completes, its
//! `outputElement` goes to its place in the body's `outputCollection`, and the completion
//! condition (with `numberOfInstances`, `numberOfActiveInstances`,
//! `numberOfCompletedInstances` and `numberOfTerminatedInstances`) may end the body early,
//! terminating the inner instances still running. The body completes when every item is
//! done, and hands the output collection to its flow scope.

use beeline_bpmn::{ElementKind, ExprOrStatic, FeelSource, MultiInstance};
use beeline_feel::Value;
use beeline_protocol::intent::{
    MultiInstanceIntent, ProcessInstanceBatchIntent, ProcessInstanceIntent as PI,
};
use beeline_protocol::value::{
    MultiInstanceRecord, ProcessInstanceBatchRecord, ProcessInstanceRecord,
};
use serde_json::{Map, Value as Json};

use crate::error::ProcessingError;
use crate::expression::{type_name, wrong_type};
use crate::processing::ProcessingContext;
use crate::processing::bpmn::behavior::variables::{
    Document, VariableOwner, eval, merge_local, merge_propagating,
};
use crate::processing::bpmn::behavior::{flow, subscriptions};
use crate::processing::bpmn::{BpmnElementContext, ElementProcessor, ErrorType, Failure, Step};
use crate::state::values::{ElementInstance, ElementLifecycle};

/// The variable each inner instance counts itself with, from 1.
const LOOP_COUNTER: &str = "loopCounter";

pub(crate) struct MultiInstanceBodyProcessor;

/// The loop characteristics of the body's activity.
fn characteristics<'p>(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    process: &'p crate::model::DeployedProcess,
) -> Result<&'p MultiInstance, ProcessingError> {
    process.model[bpmn.index]
        .multi_instance
        .as_ref()
        .ok_or_else(|| {
            ProcessingError::Internal(format!(
                "'{}' is not a multi-instance activity",
                bpmn.record.element_id
            ))
        })
}

fn extract_value_error(message: String) -> Failure {
    Failure::Incident(ErrorType::ExtractValueError, message)
}

impl ElementProcessor for MultiInstanceBodyProcessor {
    fn on_activate(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let process = bpmn.process.clone();
        let loop_characteristics = characteristics(bpmn, &process)?;
        let items = input_collection(bpmn, &loop_characteristics.input_collection)?;
        subscriptions::open(bpmn)?;
        let size = items.len();
        bpmn.ctx.append_event(
            bpmn.key,
            MultiInstanceIntent::InputCollectionEvaluated,
            MultiInstanceRecord {
                input_collection: items,
            },
        )?;
        bpmn.write(PI::ElementActivated)?;
        if let Some(name) = &loop_characteristics.output_collection {
            let nulls = Json::Array(vec![Json::Null; size]).to_string();
            let owner = VariableOwner::of(&bpmn.record);
            let document = Document::from_printed(vec![(name.clone(), nulls)]);
            merge_local(bpmn.ctx, bpmn.key, &document, &owner)?;
        }
        if size == 0 {
            bpmn.complete_self();
        } else if loop_characteristics.is_sequential {
            let kind = process.model[bpmn.index].kind();
            activate_inner_instance(bpmn.ctx, kind, &bpmn.record, bpmn.key)?;
        } else {
            let key = bpmn.ctx.next_key()?;
            bpmn.ctx.append_command(
                key,
                ProcessInstanceBatchIntent::Activate,
                ProcessInstanceBatchRecord {
                    process_instance_key: bpmn.record.process_instance_key,
                    process_definition_key: bpmn.record.process_definition_key,
                    batch_element_instance_key: bpmn.key,
                    index: size as i64,
                },
            );
        }
        Ok(())
    }

    /// The output collection goes to the flow scope before the body completes.
    fn on_complete(&self, bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
        let process = bpmn.process.clone();
        if let Some(name) = &characteristics(bpmn, &process)?.output_collection
            && let Some(variable) = bpmn.ctx.state().variables().get_local(bpmn.key, name)?
        {
            let owner = VariableOwner::of(&bpmn.record);
            let document = Document::from_printed(vec![(name.clone(), variable.value)]);
            merge_propagating(bpmn.ctx, bpmn.record.flow_scope_key, &document, &owner)?;
        }
        flow::complete_and_leave(bpmn)
    }

    /// An inner instance takes its item and loop counter (the applier of its
    /// ELEMENT_ACTIVATING counted it), and the variable its output element names, so that what
    /// it produces stays in it.
    fn on_child_activating(
        &self,
        child: &mut BpmnElementContext<'_, '_, '_>,
        body: &ElementInstance,
    ) -> Step<()> {
        let process = child.process.clone();
        let loop_characteristics = characteristics(child, &process)?;
        let loop_counter = child.instance()?.map_or(0, |inner| inner.loop_counter);
        let index = loop_counter - 1;
        let item = match u32::try_from(index) {
            Ok(index) => child
                .ctx
                .state()
                .multi_instance()
                .input_item(body.key, index)?,
            Err(_) => None,
        };
        let Some(item) = item else {
            return Err(extract_value_error(format!(
                "Expected to read item at index {index} of the multiInstanceBody input collection but it contains only {} elements. The input collection might be modified while iterating over it.",
                body.input_collection_size
            )));
        };
        let mut variables = Vec::with_capacity(3);
        let input_element = loop_characteristics.input_element.as_deref();
        if let Some(name) = input_element {
            variables.push((name.to_string(), item));
        }
        if let Some(name) = loop_characteristics
            .output_element
            .as_ref()
            .and_then(output_variable)
            .filter(|&name| Some(name) != input_element && name != LOOP_COUNTER)
        {
            variables.push((name.to_string(), "null".to_string()));
        }
        variables.push((LOOP_COUNTER.to_string(), loop_counter.to_string()));
        let owner = VariableOwner::of(&child.record);
        merge_local(
            child.ctx,
            child.key,
            &Document::from_printed(variables),
            &owner,
        )?;
        Ok(())
    }

    /// The inner instance's output element goes to its place in the output collection, and
    /// the completion condition is evaluated; a failure of either is an incident on the inner
    /// instance.
    fn before_path_completed(
        &self,
        child: &mut BpmnElementContext<'_, '_, '_>,
        body: &ElementInstance,
    ) -> Step<bool> {
        let process = child.process.clone();
        let loop_characteristics = characteristics(child, &process)?;
        if let Some(name) = &loop_characteristics.output_collection {
            update_output_collection(
                child,
                body,
                name,
                loop_characteristics.output_element.as_ref(),
            )?;
        }
        completion_condition_fulfilled(
            child,
            body,
            loop_characteristics.completion_condition.as_ref(),
        )
    }

    fn after_path_completed(
        &self,
        child: &mut BpmnElementContext<'_, '_, '_>,
        body: &ElementInstance,
        condition_fulfilled: bool,
    ) -> Result<(), ProcessingError> {
        let process = child.process.clone();
        let sequential = characteristics(child, &process)?.is_sequential;
        if condition_fulfilled {
            // The rest is not needed: what still runs is terminated, and the body completes.
            if !super::terminate_children_of(child.ctx, body)? || sequential {
                complete(child, body);
            }
            return Ok(());
        }
        if sequential && body.loop_counter < body.input_collection_size {
            let kind = process.model[child.index].kind();
            return activate_inner_instance(child.ctx, kind, &body.record(), body.key);
        }
        let done = body.completed_children + body.terminated_children;
        if body.active_children == 0 && done >= body.input_collection_size {
            complete(child, body);
        }
        Ok(())
    }

    fn on_child_terminated(
        &self,
        child: &mut BpmnElementContext<'_, '_, '_>,
        body: &ElementInstance,
    ) -> Result<(), ProcessingError> {
        if body.active_children > 0 {
            return Ok(());
        }
        if body.is(ElementLifecycle::Terminating) {
            child
                .ctx
                .append_command(body.key, PI::TerminateElement, body.record());
        } else if body.is(ElementLifecycle::Activated) {
            // The completion condition was fulfilled, and the rest are terminated now.
            complete(child, body);
        }
        Ok(())
    }
}

/// The input collection, evaluated in the body's scope: each item as JSON text.
fn input_collection(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    source: &FeelSource,
) -> Step<Vec<String>> {
    match eval(bpmn, source.id, bpmn.key, None) {
        Ok((Value::List(items), _)) => Ok(items.iter().map(|i| i.to_json().to_string()).collect()),
        Ok((other, warnings)) => {
            let expression = &bpmn.process.expressions[source.id.index()];
            Err(extract_value_error(wrong_type(
                expression, "ARRAY", &other, &warnings,
            )))
        }
        Err(failure) => Err(Failure::of_evaluation(
            failure,
            ErrorType::ExtractValueError,
        )),
    }
}

/// The variable an output element that only reads a variable (or a path into one) reads.
fn output_variable(source: &FeelSource) -> Option<&str> {
    let text = source.text.trim_start_matches('=').trim();
    let root = text.split('.').next()?.trim();
    let is_name = |part: &str| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    (text.split('.').all(|part| is_name(part.trim()))).then_some(root)
}

/// Replaces the inner instance's item of the body's output collection with its output
/// element.
fn update_output_collection(
    child: &mut BpmnElementContext<'_, '_, '_>,
    body: &ElementInstance,
    name: &str,
    output_element: Option<&FeelSource>,
) -> Step<()> {
    let value = match output_element {
        Some(source) => eval(child, source.id, child.key, None)
            .map_err(|failure| Failure::of_evaluation(failure, ErrorType::ExtractValueError))?
            .0
            .to_json(),
        None => Json::Null,
    };
    let current = child
        .ctx
        .state()
        .variables()
        .get_local(body.key, name)?
        .map(|variable| serde_json::from_str::<Json>(&variable.value).unwrap_or(Json::Null))
        .unwrap_or(Json::Null);
    let Json::Array(mut items) = current else {
        return Err(extract_value_error(format!(
            "Unable to update an item in output collection '{name}' because the type of the output collection is: {}. This may happen when multiple BPMN elements write to the same variable.",
            type_name(&Value::from_json(&current))
        )));
    };
    let loop_counter = child.instance()?.map_or(0, |inner| inner.loop_counter);
    let Some(slot) = usize::try_from(loop_counter - 1)
        .ok()
        .and_then(|index| items.get_mut(index))
    else {
        return Err(extract_value_error(format!(
            "Unable to update an item in output collection '{name}' at position {loop_counter} because the size of the collection is: {}. This may happen when multiple BPMN elements write to the same variable.",
            items.len()
        )));
    };
    *slot = value;
    let owner = VariableOwner::of(&child.record);
    let document = Document::from_printed(vec![(name.to_string(), Json::Array(items).to_string())]);
    merge_local(child.ctx, body.key, &document, &owner)?;
    Ok(())
}

/// Whether the completion condition holds, evaluated in the completing inner instance with
/// the body's counts (the completing instance counts as completed, no longer as active).
fn completion_condition_fulfilled(
    child: &BpmnElementContext<'_, '_, '_>,
    body: &ElementInstance,
    condition: Option<&ExprOrStatic<String>>,
) -> Step<bool> {
    let source = match condition {
        None => return Ok(false),
        Some(ExprOrStatic::Expression(source)) => source,
        Some(ExprOrStatic::Static(text)) => {
            return Err(extract_value_error(format!(
                "Expected result of the expression '{text}' to be 'BOOLEAN', but was 'STRING'."
            )));
        }
    };
    let mut counts = Map::new();
    counts.insert("numberOfInstances".into(), body.loop_counter.into());
    counts.insert(
        "numberOfActiveInstances".into(),
        (body.active_children - 1).max(0).into(),
    );
    counts.insert(
        "numberOfCompletedInstances".into(),
        (body.completed_children + 1).into(),
    );
    counts.insert(
        "numberOfTerminatedInstances".into(),
        body.terminated_children.into(),
    );
    match eval(child, source.id, child.key, Some(&counts)) {
        Ok((Value::Bool(fulfilled), _)) => Ok(fulfilled),
        Ok((other, warnings)) => {
            let expression = &child.process.expressions[source.id.index()];
            Err(extract_value_error(wrong_type(
                expression, "BOOLEAN", &other, &warnings,
            )))
        }
        Err(failure) => Err(Failure::of_evaluation(
            failure,
            ErrorType::ExtractValueError,
        )),
    }
}

/// Completes the body in a follow-up command.
fn complete(child: &mut BpmnElementContext<'_, '_, '_>, body: &ElementInstance) {
    child
        .ctx
        .append_command(body.key, PI::CompleteElement, body.record());
}

/// Starts the next inner instance of a body: the activity itself, inside the body.
fn activate_inner_instance(
    ctx: &mut ProcessingContext<'_, '_>,
    kind: ElementKind,
    body: &ProcessInstanceRecord,
    body_key: i64,
) -> Result<(), ProcessingError> {
    let key = ctx.next_key()?;
    ctx.append_command(key, PI::ActivateElement, inner_record(kind, body, body_key));
    Ok(())
}

/// The record of an inner instance of the body `body_key`, whose record is `body`.
pub(crate) fn inner_record(
    kind: ElementKind,
    body: &ProcessInstanceRecord,
    body_key: i64,
) -> ProcessInstanceRecord {
    ProcessInstanceRecord {
        flow_scope_key: body_key,
        bpmn_element_type: kind.zeebe_element_type().to_string(),
        bpmn_event_type: kind.zeebe_event_type().to_string(),
        ..body.clone()
    }
}
