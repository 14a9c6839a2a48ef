//! Unit tests on whole documents: one module per area, sharing small builders of XML.

mod elements;
mod events;
mod extensions;
mod robustness;
mod validation;

use crate::{ParseError, Process, parse};
use std::sync::Arc;

pub(crate) const NS: &str = r#"xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI" xmlns:dc="http://www.omg.org/spec/DD/20100524/DC""#;

/// A document with one executable process `process` containing `body`, and `roots`
/// (messages, errors, ...) after it.
pub(crate) fn doc(body: &str, roots: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions {NS} id="definitions">
  <bpmn:process id="process" isExecutable="true">
{body}
  </bpmn:process>
{roots}
</bpmn:definitions>"#
    )
}

/// `<bpmn:extensionElements>` around `content`.
pub(crate) fn ext(content: &str) -> String {
    format!("<bpmn:extensionElements>{content}</bpmn:extensionElements>")
}

/// A service task with a job type.
pub(crate) fn service_task(id: &str) -> String {
    format!(
        r#"<bpmn:serviceTask id="{id}">{}</bpmn:serviceTask>"#,
        ext(r#"<zeebe:taskDefinition type="work"/>"#)
    )
}

pub(crate) fn flow(id: &str, source: &str, target: &str) -> String {
    format!(r#"<bpmn:sequenceFlow id="{id}" sourceRef="{source}" targetRef="{target}"/>"#)
}

/// Parses a document that must be valid, with one process.
#[track_caller]
pub(crate) fn process(xml: &str) -> Arc<Process> {
    match parse(xml.as_bytes()) {
        Ok(mut d) => {
            assert_eq!(d.processes.len(), 1, "expected one process");
            d.processes.remove(0)
        }
        Err(e) => panic!("expected a valid model, got:\n{e}\n\n{xml}"),
    }
}

/// Parses a process body that must be valid.
#[track_caller]
pub(crate) fn valid(body: &str, roots: &str) -> Arc<Process> {
    process(&doc(body, roots))
}

/// The validation errors of a document as `(element, message)`.
#[track_caller]
pub(crate) fn errors_of(xml: &str) -> Vec<(String, String)> {
    match parse(xml.as_bytes()) {
        Ok(_) => panic!("expected validation errors:\n{xml}"),
        Err(ParseError::Xml(e)) => panic!("expected validation errors, got malformed XML: {e}"),
        Err(ParseError::Invalid(errors)) => {
            errors.into_iter().map(|e| (e.element, e.message)).collect()
        }
    }
}

/// The validation errors of a process body.
#[track_caller]
pub(crate) fn errors(body: &str, roots: &str) -> Vec<(String, String)> {
    errors_of(&doc(body, roots))
}

/// Asserts that the errors are exactly `expected` (in document order).
#[track_caller]
pub(crate) fn assert_errors(body: &str, roots: &str, expected: &[(&str, &str)]) {
    let actual = errors(body, roots);
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(e, m)| (e.to_string(), m.to_string()))
        .collect();
    assert_eq!(actual, expected, "\n{}", doc(body, roots));
}

/// A minimal valid body: a none start event.
pub(crate) const START: &str = r#"<bpmn:startEvent id="start"/>"#;
