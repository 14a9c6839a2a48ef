//! Variables: setting them (VARIABLE CREATED / UPDATED), Zeebe's propagation, and input and
//! output mappings (Zeebe's `VariableBehavior` and `VariableMappingBehavior`).

use beeline_bpmn::{ExprOrStatic, ExpressionId};
use beeline_feel::Value;
use beeline_protocol::intent::VariableIntent;
use beeline_protocol::value::VariableRecord;
use serde_json::{Map, Value as Json};

use super::{Bpmn, Step};
use crate::error::ProcessingError;
use crate::expression::{EvalFailure, ScopeVariables, evaluate};
use crate::processing::ProcessingContext;
use crate::state::values::StoredVariable;

/// What a variable record says about where it belongs.
#[derive(Debug, Clone)]
pub(crate) struct VariableOwner {
    pub process_instance_key: i64,
    pub process_definition_key: i64,
    pub bpmn_process_id: String,
    pub tenant_id: String,
}

impl VariableOwner {
    pub fn of(record: &beeline_protocol::value::ProcessInstanceRecord) -> Self {
        Self {
            process_instance_key: record.process_instance_key,
            process_definition_key: record.process_definition_key,
            bpmn_process_id: record.bpmn_process_id.clone(),
            tenant_id: record.tenant_id.clone(),
        }
    }
}

/// Sets `name` in exactly `scope`: CREATED when new there, UPDATED when the value changes,
/// nothing when it is the same.
pub(crate) fn set_local(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: i64,
    name: &str,
    value: &Json,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    let existing = ctx.state().variables().get_local(scope, name)?;
    write(ctx, scope, name, value, existing, owner)
}

/// Sets `name` in `scope`, which holds `existing` under that name now.
fn write(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: i64,
    name: &str,
    value: &Json,
    existing: Option<StoredVariable>,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    let text = value.to_string();
    let (key, intent) = match existing {
        Some(variable) if variable.value == text => return Ok(()),
        Some(variable) => (variable.key, VariableIntent::Updated),
        None => (ctx.next_key()?, VariableIntent::Created),
    };
    ctx.append_event(
        key,
        intent,
        VariableRecord {
            name: name.to_string(),
            value: text,
            scope_key: scope,
            process_instance_key: owner.process_instance_key,
            process_definition_key: owner.process_definition_key,
            bpmn_process_id: owner.bpmn_process_id.clone(),
            tenant_id: owner.tenant_id.clone(),
        },
    )?;
    Ok(())
}

/// Sets every variable of `document` in exactly `scope`.
pub(crate) fn merge_local(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: i64,
    document: &Map<String, Json>,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    for (name, value) in document {
        set_local(ctx, scope, name, value, owner)?;
    }
    Ok(())
}

/// Creates every variable of `document` in `scope`, a scope this command made (it holds no
/// variable yet, so nothing is looked up).
pub(crate) fn create_local(
    ctx: &mut ProcessingContext<'_, '_>,
    new_scope: i64,
    document: &Map<String, Json>,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    for (name, value) in document {
        write(ctx, new_scope, name, value, None, owner)?;
    }
    Ok(())
}

/// Zeebe's propagation: each variable goes to the nearest scope, from `scope` up, that already
/// has a variable of that name, or to the root scope (the process instance) if none has.
pub(crate) fn merge_propagating(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: i64,
    document: &Map<String, Json>,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    let chain = ctx.state().variables().scope_chain(scope)?;
    let root = *chain.last().unwrap_or(&scope);
    for (name, value) in document {
        // The chain ends at the root: a name found nowhere is new there.
        let mut target = (root, None);
        for s in &chain {
            if let Some(existing) = ctx.state().variables().get_local(*s, name)? {
                target = (*s, Some(existing));
                break;
            }
        }
        write(ctx, target.0, name, value, target.1, owner)?;
    }
    Ok(())
}

/// Parses a variables document (JSON object text; empty means none).
pub(crate) fn parse_document(bytes: &[u8]) -> Result<Map<String, Json>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Json>(bytes) {
        Ok(Json::Object(map)) => Ok(map),
        Ok(_) => Err("expected the variables to be a JSON object".into()),
        Err(e) => Err(format!("invalid JSON ({e})")),
    }
}

/// Checks a variables document as [`parse_document`] would, without building it: for a
/// document that is only validated now and read later.
pub(crate) fn check_document(bytes: &[u8]) -> Result<(), String> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => Ok(()),
        Some(b'{') => serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
            .map(|_| ())
            .map_err(|e| format!("invalid JSON ({e})")),
        // Not an object: the parse names what it is instead.
        Some(_) => parse_document(bytes).map(|_| ()),
    }
}

/// Sets `value` at a variable path like `order.customer.id` inside `document`, creating or
/// extending objects along the way.
fn set_path(document: &mut Map<String, Json>, path: &str, value: Json) {
    let mut parts = path.split('.').map(str::trim).peekable();
    let mut current = document;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            current.insert(part.to_string(), value);
            return;
        }
        let entry = current
            .entry(part.to_string())
            .or_insert_with(|| Json::Object(Map::new()));
        if !entry.is_object() {
            *entry = Json::Object(Map::new());
        }
        let Json::Object(next) = entry else { return };
        current = next;
    }
}

/// Evaluates an expression of the element's process against the variables visible from
/// `scope`, plus `overlay`.
pub(crate) fn eval(
    bpmn: &Bpmn<'_, '_, '_>,
    id: ExpressionId,
    scope: i64,
    overlay: Option<&Map<String, Json>>,
) -> Result<(Value, String), EvalFailure> {
    let Some(expression) = bpmn.process.expression(id) else {
        return Err(EvalFailure::Incident(format!(
            "expression {} of element '{}' was not compiled",
            id.0, bpmn.record.element_id
        )));
    };
    let state = bpmn.ctx.state();
    let mut variables = ScopeVariables::new(state, scope);
    if let Some(overlay) = overlay {
        variables = variables.with_overlay(overlay);
    }
    evaluate(
        expression,
        &variables,
        bpmn.ctx.now(),
        bpmn.ctx.source_position() ^ bpmn.key,
    )
}

/// Input mappings: evaluated in the element's scope (each sees the ones before it), then set
/// as local variables of the element. `Err(message)` is an I/O mapping incident.
pub(super) fn apply_input_mappings(bpmn: &mut Bpmn<'_, '_, '_>) -> Step<()> {
    let mut local = Map::new();
    let inputs = bpmn.element().io_mapping.inputs.clone();
    for mapping in &inputs {
        let value = match &mapping.source {
            None => Json::Null,
            Some(ExprOrStatic::Static(text)) => Json::String(text.clone()),
            Some(ExprOrStatic::Expression(source)) => {
                match eval(bpmn, source.id, bpmn.key, Some(&local)) {
                    Ok((value, _)) => value.to_json(),
                    Err(EvalFailure::Incident(message)) => return Ok(Err(message)),
                    Err(EvalFailure::State(e)) => return Err(e.into()),
                }
            }
        };
        set_path(&mut local, &mapping.target, value);
    }
    let owner = VariableOwner::of(&bpmn.record);
    merge_local(bpmn.ctx, bpmn.key, &local, &owner)?;
    Ok(Ok(()))
}

/// What an element completes with: output mappings into its flow scope, or else the
/// variables it completed with (a job's, a script's result) propagated from its own scope.
/// `Err(message)` is an I/O mapping incident.
pub(super) fn apply_output_mappings(
    bpmn: &mut Bpmn<'_, '_, '_>,
    completion: Option<&Map<String, Json>>,
) -> Step<()> {
    let owner = VariableOwner::of(&bpmn.record);
    let outputs = bpmn.element().io_mapping.outputs.clone();
    let flow_scope = bpmn.record.flow_scope_key;
    if outputs.is_empty() || flow_scope <= 0 {
        if let Some(variables) = completion {
            merge_propagating(bpmn.ctx, bpmn.key, variables, &owner)?;
        }
        return Ok(Ok(()));
    }
    if let Some(variables) = completion {
        merge_local(bpmn.ctx, bpmn.key, variables, &owner)?;
    }
    let mut result = Map::new();
    for mapping in &outputs {
        let value = match eval(bpmn, mapping.source.id, bpmn.key, None) {
            Ok((value, _)) => value.to_json(),
            Err(EvalFailure::Incident(message)) => return Ok(Err(message)),
            Err(EvalFailure::State(e)) => return Err(e.into()),
        };
        let root = mapping
            .target
            .split('.')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        if mapping.target.contains('.') && !result.contains_key(&root) {
            // A nested target changes one part of the variable as the flow scope sees it.
            let current = bpmn
                .ctx
                .state()
                .variables()
                .get_visible(flow_scope, &root)?
                .and_then(|(_, v)| serde_json::from_str::<Json>(&v.value).ok())
                .filter(Json::is_object);
            if let Some(current) = current {
                result.insert(root, current);
            }
        }
        set_path(&mut result, &mapping.target, value);
    }
    merge_propagating(bpmn.ctx, flow_scope, &result, &owner)?;
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_nest_and_merge() {
        let mut document = Map::new();
        set_path(&mut document, "order.id", Json::from(7));
        set_path(&mut document, "order.customer.name", Json::from("Ada"));
        set_path(&mut document, "total", Json::from(3));
        assert_eq!(
            Json::Object(document),
            serde_json::json!({"order": {"id": 7, "customer": {"name": "Ada"}}, "total": 3})
        );
    }

    #[test]
    fn documents_must_be_objects() {
        for text in [
            &b""[..],
            b" ",
            br#"{"a":[1,{"b":"\u00e9"}]}"#,
            b"[1]",
            b"{",
            b"1",
            br#"{"a":1} x"#,
            br#"{"a":"\q"}"#,
        ] {
            assert_eq!(
                check_document(text),
                parse_document(text).map(|_| ()),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(parse_document(b"").unwrap(), Map::new());
        assert!(parse_document(b"[1]").is_err());
        assert!(parse_document(b"{").is_err());
        assert_eq!(parse_document(br#"{"a":1}"#).unwrap()["a"], Json::from(1));
    }
}
