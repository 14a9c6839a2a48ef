//! Variables: setting them (VARIABLE CREATED / UPDATED), Zeebe's propagation, and input and
//! output mappings (Zeebe's `VariableBehavior` and `VariableMappingBehavior`).

use std::collections::BTreeMap;

use beeline_bpmn::{ExprOrStatic, ExpressionId};
use beeline_feel::Value;
use beeline_protocol::intent::VariableIntent;
use beeline_protocol::value::VariableRecord;
use serde_json::{Map, Value as Json};

use crate::error::ProcessingError;
use crate::expression::{EvalFailure, ScopeVariables, evaluate};
use crate::processing::ProcessingContext;
use crate::processing::bpmn::{BpmnElementContext, ErrorType, Failure, Step};
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

/// A variables document ready to be set: each top-level variable, in name order, with its value
/// as the records and the state hold it: its canonical JSON text (`beeline_json`: compact,
/// doubles in their shortest text, integers as sent, as Zeebe's MessagePack keeps them).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Document(Vec<(String, String)>);

impl Document {
    /// Reads a variables document (JSON object text; empty means none) in one pass of
    /// `beeline_json`'s reader, which refuses what Zeebe cannot keep (a repeated name, an
    /// integer beyond 64 bits, ...) and names where.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::default());
        }
        let mut entries = beeline_json::document_bytes(bytes).map_err(|e| reason(&e))?;
        // Names are unique: the reader refuses a repeated one.
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(Self(entries))
    }

    /// The document of computed values (mappings, results): `serde_json` prints them as
    /// canonical text.
    pub fn from_map(map: &Map<String, Json>) -> Self {
        Self(
            map.iter()
                .map(|(n, v)| (n.clone(), v.to_string()))
                .collect(),
        )
    }

    /// Variables in this order, each with its value as printed JSON (as `serde_json` prints
    /// it, and as the state holds it).
    pub fn from_printed(variables: Vec<(String, String)>) -> Self {
        Self(variables)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Sets one variable to a computed value, replacing one of that name.
    pub fn set(&mut self, name: &str, value: &Json) {
        self.set_text(name, value.to_string());
    }

    /// Sets one variable to a value given in canonical text, replacing one of that name.
    fn set_text(&mut self, name: &str, text: String) {
        match self.0.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            Ok(i) => self.0[i].1 = text,
            Err(i) => self.0.insert(i, (name.to_string(), text)),
        }
    }

    /// The document as JSON object text, for a record.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::document(self.iter())
    }
}

/// Why a document was refused, to follow "but" in a rejection.
fn reason(error: &beeline_json::Error) -> String {
    if error.is_syntax() {
        format!("the document is not valid JSON: {error}")
    } else {
        error.to_string()
    }
}

/// Sets `name` in exactly `scope`: CREATED when new there, UPDATED when the value changes,
/// nothing when it is the same.
fn set_local(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: i64,
    name: &str,
    value: &str,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    let existing = ctx.state().variables().get_local(scope, name)?;
    write(ctx, scope, name, value, existing, owner)
}

/// Sets `name` to `text` (its value as printed JSON) in `scope`, which holds `existing` under
/// that name now.
fn write(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: i64,
    name: &str,
    text: &str,
    existing: Option<StoredVariable>,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
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
            value: text.to_string(),
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
    document: &Document,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    for (name, value) in document.iter() {
        set_local(ctx, scope, name, value, owner)?;
    }
    Ok(())
}

/// Creates every variable of `document` in `scope`, a scope this command made (it holds no
/// variable yet, so nothing is looked up).
pub(crate) fn create_local(
    ctx: &mut ProcessingContext<'_, '_>,
    new_scope: i64,
    document: &Document,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    for (name, value) in document.iter() {
        write(ctx, new_scope, name, value, None, owner)?;
    }
    Ok(())
}

/// Zeebe's propagation: each variable goes to the nearest scope, from `scope` up, that already
/// has a variable of that name, or to the root scope (the process instance) if none has.
pub(crate) fn merge_propagating(
    ctx: &mut ProcessingContext<'_, '_>,
    scope: i64,
    document: &Document,
    owner: &VariableOwner,
) -> Result<(), ProcessingError> {
    let chain = ctx.state().variables().scope_chain(scope)?;
    let root = *chain.last().unwrap_or(&scope);
    for (name, value) in document.iter() {
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

/// Parses a variables document (JSON object text; empty means none) into values, for
/// expressions to read: checked by `beeline_json`'s reader first, so what it refuses is
/// refused here too.
pub(crate) fn parse_document(bytes: &[u8]) -> Result<Map<String, Json>, String> {
    check_document(bytes)?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    serde_json::from_slice::<Map<String, Json>>(bytes).map_err(|e| e.to_string())
}

/// Checks a variables document (JSON object text; empty means none) as [`Document::parse`]
/// reads it, without building it: for a document that is kept now and read later.
pub(crate) fn check_document(bytes: &[u8]) -> Result<(), String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "the document is not valid JSON: it is not UTF-8 from byte {}",
            e.valid_up_to()
        )
    })?;
    beeline_json::check_document(text).map_err(|e| reason(&e))
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
    bpmn: &BpmnElementContext<'_, '_, '_>,
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
/// as local variables of the element. A failure is an I/O mapping incident.
pub(crate) fn apply_input_mappings(bpmn: &mut BpmnElementContext<'_, '_, '_>) -> Step<()> {
    let mut local = Map::new();
    let mut copied = Copied::default();
    let inputs = bpmn.element().io_mapping.inputs.clone();
    for mapping in &inputs {
        let value = match &mapping.source {
            None => Json::Null,
            Some(ExprOrStatic::Static(text)) => Json::String(text.clone()),
            Some(ExprOrStatic::Expression(source)) => {
                if let Some(value) =
                    copied.object(bpmn, source.id, &mapping.target, Some(&local))?
                {
                    local.insert(mapping.target.trim().to_string(), value);
                    continue;
                }
                eval(bpmn, source.id, bpmn.key, Some(&local))
                    .map_err(io_mapping_error)?
                    .0
                    .to_json()
            }
        };
        copied.overwritten(&mapping.target);
        set_path(&mut local, &mapping.target, value);
    }
    let owner = VariableOwner::of(&bpmn.record);
    let document = copied.into_document(&local);
    merge_local(bpmn.ctx, bpmn.key, &document, &owner)?;
    Ok(())
}

/// Objects a mapping copies as they are (`source="=order"`, a variable and nothing else, to
/// a target without a path): Zeebe reads an object variable into FEEL as a context over its
/// MessagePack map and writes that context back as the map it read
/// (`MessagePackContext`, `FeelToMessagePackTransformer.writeRaw`), so its key order and every
/// number inside (`1.0`, `-0.0`) stay as they were. Here the stored text is copied. Other
/// values, and objects a mapping changes, go through FEEL.
#[derive(Default)]
struct Copied(BTreeMap<String, String>);

impl Copied {
    /// The value of an object variable that the mapping from `source` to `target` copies as
    /// it is (its text is kept for the document); `None` when the mapping computes its value.
    fn object(
        &mut self,
        bpmn: &BpmnElementContext<'_, '_, '_>,
        source: ExpressionId,
        target: &str,
        overlay: Option<&Map<String, Json>>,
    ) -> Step<Option<Json>> {
        let target = target.trim();
        if target.contains('.') {
            return Ok(None);
        }
        let Some(expression) = bpmn.process.expression(source) else {
            return Ok(None);
        };
        let beeline_feel::ast::Kind::Var(name) = &expression.root().kind else {
            return Ok(None);
        };
        let text = match overlay.and_then(|o| o.get(&**name)) {
            // A value this element's mappings made: copied as they made it.
            Some(_) => self.0.get(&**name).cloned(),
            None => bpmn
                .ctx
                .state()
                .variables()
                .get_visible(bpmn.key, name)?
                .map(|(_, variable)| variable.value),
        };
        let Some(text) = text.filter(|t| t.starts_with('{')) else {
            return Ok(None);
        };
        let Ok(value) = serde_json::from_str::<Json>(&text) else {
            return Ok(None);
        };
        self.0.insert(target.to_string(), text);
        Ok(Some(value))
    }

    /// A later mapping sets (part of) `target`: its copy no longer stands.
    fn overwritten(&mut self, target: &str) {
        let root = target.split('.').next().unwrap_or_default().trim();
        self.0.remove(root);
    }

    /// The document of `values`, with the copied objects in the text they were copied in.
    fn into_document(self, values: &Map<String, Json>) -> Document {
        let mut document = Document::from_map(values);
        for (name, text) in self.0 {
            document.set_text(&name, text);
        }
        document
    }
}

fn io_mapping_error(failure: EvalFailure) -> Failure {
    Failure::of_evaluation(failure, ErrorType::IoMappingError)
}

/// What an element completes with: output mappings into its flow scope, or else the
/// variables it completed with (a job's, a script's result) propagated from its own scope.
/// A failure is an I/O mapping incident.
pub(crate) fn apply_output_mappings(
    bpmn: &mut BpmnElementContext<'_, '_, '_>,
    completion: Option<&Document>,
) -> Step<()> {
    let owner = VariableOwner::of(&bpmn.record);
    let outputs = bpmn.element().io_mapping.outputs.clone();
    let flow_scope = bpmn.record.flow_scope_key;
    if outputs.is_empty() || flow_scope <= 0 {
        if let Some(variables) = completion {
            merge_propagating(bpmn.ctx, bpmn.key, variables, &owner)?;
        }
        return Ok(());
    }
    if let Some(variables) = completion {
        merge_local(bpmn.ctx, bpmn.key, variables, &owner)?;
    }
    let mut result = Map::new();
    let mut copied = Copied::default();
    for mapping in &outputs {
        if let Some(value) = copied.object(bpmn, mapping.source.id, &mapping.target, None)? {
            result.insert(mapping.target.trim().to_string(), value);
            continue;
        }
        copied.overwritten(&mapping.target);
        let value = eval(bpmn, mapping.source.id, bpmn.key, None)
            .map_err(io_mapping_error)?
            .0
            .to_json();
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
    merge_propagating(bpmn.ctx, flow_scope, &copied.into_document(&result), &owner)?;
    Ok(())
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
            br#"{"a":1,"a":2}"#,
            br#"{"a":123456789012345678901234567890}"#,
        ] {
            assert_eq!(
                check_document(text),
                parse_document(text).map(|_| ()),
                "{}",
                String::from_utf8_lossy(text)
            );
            assert_eq!(
                check_document(text),
                Document::parse(text).map(|_| ()),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(parse_document(b"").unwrap(), Map::new());
        assert!(
            parse_document(b"[1]")
                .unwrap_err()
                .contains("expected a JSON object, but the text is an array")
        );
        assert!(
            parse_document(b"{")
                .unwrap_err()
                .starts_with("the document is not valid JSON: ")
        );
        assert_eq!(parse_document(br#"{"a":1}"#).unwrap()["a"], Json::from(1));
    }

    #[test]
    fn a_document_holds_each_value_in_canonical_text_in_name_order() {
        let text = r#" { "s" : "plain" , "e": "tab\tand \u00e9 \/", "u": "é ",
            "i": 42, "n": -7, "z": 0, "nz": -0, "big": 123456789012345678,
            "bigger": 18446744073709551615, "f": 1.50, "d": 0.12496785020850265,
            "x": 1e3, "t": true, "no": false, "null": null,
            "o": { "b" : [1, 2 ,{"c":"d"}], "a": {} }, "arr": [ ] } "#
            .as_bytes();
        let document = Document::parse(text).unwrap();
        let value = |name: &str| {
            document
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap()
                .1
                .to_string()
        };
        assert_eq!(value("e"), r#""tab\tand é /""#);
        assert_eq!(value("o"), r#"{"b":[1,2,{"c":"d"}],"a":{}}"#);
        assert_eq!(value("nz"), "0");
        assert_eq!(value("f"), "1.5");
        assert_eq!(value("x"), "1000.0");
        assert_eq!(value("d"), "0.12496785020850265");
        assert_eq!(value("bigger"), "18446744073709551615");
        let names: Vec<&str> = document.iter().map(|(n, _)| n).collect();
        assert!(names.is_sorted(), "{names:?}");
        assert_eq!(Document::parse(b"  ").unwrap(), Document::default());
        assert!(
            Document::parse(br#"{"a":1,"a":2}"#)
                .unwrap_err()
                .contains("the key \"a\" twice")
        );
    }
}
