//! Zeebe extension elements every flow node may have, and the checklist against Zeebe's
//! descriptor of its extension namespace.

use super::*;
use crate::model::*;
use crate::parse::{IGNORED_ZEEBE_ATTRIBUTES, ZEEBE_ELEMENTS};

#[test]
fn io_mapping_inputs_and_outputs() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:task id="t">{}</bpmn:task>"#,
            ext(r#"<zeebe:ioMapping>
                <zeebe:input source="=order.id" target="orderId"/>
                <zeebe:input source="static text" target="note"/>
                <zeebe:input target="cleared"/>
                <zeebe:output source="=result" target="order.result"/>
              </zeebe:ioMapping>"#)
        ),
        "",
    );
    let io = &p.element_by_id("t").unwrap().1.io_mapping;
    assert_eq!(io.inputs.len(), 3);
    assert!(io.inputs[0].source.as_ref().unwrap().is_expression());
    assert_eq!(
        io.inputs[1].source,
        Some(ExprOrStatic::Static("static text".into()))
    );
    assert_eq!(io.inputs[2].source, None);
    assert_eq!(io.outputs[0].source.text, "result");
    assert_eq!(io.outputs[0].target, "order.result");
}

#[test]
fn properties_on_any_element() {
    let p = valid(
        &format!(
            r#"<bpmn:startEvent id="start">{}</bpmn:startEvent>"#,
            ext(
                r#"<zeebe:properties><zeebe:property name="a" value="1"/><zeebe:property name="b" value="2"/></zeebe:properties>"#
            )
        ),
        "",
    );
    let props = &p.element_by_id("start").unwrap().1.properties;
    assert_eq!(
        props,
        &vec![
            Property {
                name: "a".into(),
                value: "1".into()
            },
            Property {
                name: "b".into(),
                value: "2".into()
            }
        ]
    );
}

#[test]
fn execution_listeners_with_headers() {
    let p = valid(
        &format!(
            r#"{START}<bpmn:task id="t">{}</bpmn:task>"#,
            ext(r#"<zeebe:executionListeners>
                <zeebe:executionListener eventType="start" type="=before" retries="2">
                  <zeebe:taskHeaders><zeebe:header key="k" value="v"/></zeebe:taskHeaders>
                </zeebe:executionListener>
                <zeebe:executionListener eventType="end" type="after"/>
              </zeebe:executionListeners>"#)
        ),
        "",
    );
    let listeners = &p.element_by_id("t").unwrap().1.execution_listeners;
    assert_eq!(listeners.len(), 2);
    assert_eq!(listeners[0].event_type, ExecutionListenerEventType::Start);
    assert!(listeners[0].job_type.is_expression());
    assert_eq!(listeners[0].retries, ExprOrStatic::Static("2".into()));
    assert_eq!(listeners[0].task_headers[0].key, "k");
    assert_eq!(listeners[1].event_type, ExecutionListenerEventType::End);
    assert_eq!(listeners[1].retries, ExprOrStatic::Static("3".into()));
}

#[test]
fn foreign_extension_elements_and_attributes_are_ignored() {
    let p = valid(
        &format!(
            r#"<bpmn:startEvent id="start" zeebe:modelerTemplate="t" zeebe:modelerTemplateVersion="2" other:x="1" xmlns:other="urn:other">{}</bpmn:startEvent>"#,
            ext(
                r#"<other:thing xmlns:other="urn:other"><zeebe:properties/></other:thing><zeebe:futureElement attr="1"/>"#
            )
        ),
        "",
    );
    assert!(p.element_by_id("start").unwrap().1.properties.is_empty());
}

/// Zeebe's moddle descriptor (`zeebe.json`) lists every `zeebe:` element and attribute the
/// Camunda Modeler writes. Each must be read by the parser or deliberately ignored.
#[test]
fn every_zeebe_extension_of_the_descriptor_is_known() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpora/zeebe-extensions/resources/zeebe.json"
    );
    let Ok(json) = std::fs::read_to_string(path) else {
        println!("SKIPPED: {path} is absent, the extension checklist was not checked");
        return;
    };
    let types = descriptor_types(&json);
    // The reader must have understood the file: it has 36 types and 59 attributes.
    assert!(types.len() > 30, "read only {} types", types.len());
    assert!(types.iter().map(|(_, _, a)| a.len()).sum::<usize>() > 50);
    let mut missing = Vec::new();
    for (type_name, extends, attributes) in types {
        // Element names are the type names with a lower-case first letter.
        let mut chars = type_name.chars();
        let element: String = chars
            .next()
            .map(|c| c.to_ascii_lowercase())
            .into_iter()
            .chain(chars)
            .collect();
        let targets: Vec<String> = if extends.is_empty() {
            vec![element]
        } else {
            extends
        };
        for target in targets {
            let zeebe_target = target.strip_prefix("zeebe:").map(lower_first);
            for attribute in &attributes {
                let known = match &zeebe_target {
                    Some(z) => knows(z, attribute),
                    None if target.starts_with("bpmn:") => {
                        IGNORED_ZEEBE_ATTRIBUTES.contains(&("<bpmn element>", attribute.as_str()))
                    }
                    None => knows(&target, attribute),
                };
                if !known {
                    missing.push(format!("{target}/@{attribute}"));
                }
            }
            if zeebe_target.is_none()
                && !target.starts_with("bpmn:")
                && !is_abstract(&target)
                && !ZEEBE_ELEMENTS.iter().any(|(e, _)| *e == target)
            {
                missing.push(target);
            }
        }
    }
    assert!(missing.is_empty(), "unknown to the parser: {missing:?}");
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_ascii_lowercase())
        .into_iter()
        .chain(chars)
        .collect()
}

/// Types that are only base types of others, never elements.
fn is_abstract(element: &str) -> bool {
    matches!(element, "inputOutputParameter" | "zeebeServiceTask")
}

fn knows(element: &str, attribute: &str) -> bool {
    let read = ZEEBE_ELEMENTS
        .iter()
        .any(|(e, attrs)| *e == element && attrs.contains(&attribute));
    let parent_read = element == "inputOutputParameter"
        && ["input", "output"].iter().all(|e| knows(e, attribute));
    read || parent_read || IGNORED_ZEEBE_ATTRIBUTES.contains(&(element, attribute))
}

/// `(type name, extends, attribute names)` of every type in the descriptor. A tiny reader
/// for this one well-known file, so the crate needs no JSON dependency.
fn descriptor_types(json: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut types = Vec::new();
    let Some(start) = json.find("\"types\"") else {
        return types;
    };
    for chunk in json[start..].split("\"name\": \"").skip(1) {
        let Some(end) = chunk.find('"') else { continue };
        let name = &chunk[..end];
        // A type starts with an upper-case name; properties have lower-case names.
        if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
            if let Some((_, _, attributes)) = types.last_mut() {
                let rest = &chunk[end..];
                let property_end = rest.find('}').unwrap_or(rest.len());
                let property = &rest[..property_end];
                if property.contains("\"isAttr\": true") {
                    attributes.push(name.to_string());
                }
            }
            continue;
        }
        let rest = &chunk[end..];
        let extends = match (rest.find("\"extends\""), rest.find("\"properties\"")) {
            (Some(e), p) if p.is_none_or(|p| e < p) => {
                let list = &rest[e..];
                let open = list.find('[').map_or(0, |o| o + 1);
                let close = list.find(']').unwrap_or(list.len()).max(open);
                list[open..close]
                    .split('"')
                    .filter(|s| s.contains(':') && !s.contains(char::is_whitespace))
                    .map(str::to_string)
                    .collect()
            }
            _ => Vec::new(),
        };
        types.push((name.to_string(), extends, Vec::new()));
    }
    types
}
