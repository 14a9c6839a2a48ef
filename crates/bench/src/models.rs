//! The built-in process models, written as BPMN XML with Zeebe's extension elements.
//!
//! Every service task has the one job type [`JOB_TYPE`]; the worker tells the tasks apart by
//! element id. Each model ends with a service task, so the completion of that task's job is
//! the completion of the instance (the engine completes the task, the end event and the
//! process in the same batch as the job's COMPLETED event).

use std::fmt::Write;

use crate::args::ProcessKind;

pub const JOB_TYPE: &str = "beeline-bench";
/// The message the `typical` model waits for, correlated on the `benchKey` variable.
pub const MESSAGE_NAME: &str = "beeline-bench-message";

/// A built-in model and what the tool needs to know about it.
#[derive(Debug, Clone)]
pub struct Model {
    pub bpmn_process_id: String,
    pub resource_name: String,
    pub xml: String,
    /// The element whose job completes the instance.
    pub final_element: &'static str,
    /// Elements whose job is created in the same batch as the request that made it (the
    /// instance's creation or the previous job's completion), so the time from that request
    /// to the job's arrival at a worker is its hand-off latency.
    pub measured_elements: &'static [&'static str],
    /// Whether each instance waits for a message the starter publishes.
    pub needs_message: bool,
}

impl Model {
    pub fn new(kind: ProcessKind) -> Model {
        let id = format!("beeline-bench-{}", kind.name());
        let (xml, final_element, measured_elements, needs_message): (_, _, &[&str], _) = match kind
        {
            ProcessKind::OneTask => (one_task(&id), "task", &["task"], false),
            ProcessKind::TenTasks => (
                ten_tasks(&id),
                "task10",
                &[
                    "task1", "task2", "task3", "task4", "task5", "task6", "task7", "task8",
                    "task9", "task10",
                ],
                false,
            ),
            ProcessKind::Typical => (
                typical(&id),
                "finish",
                &["validate", "approve", "auto", "enrich"],
                true,
            ),
        };
        Model {
            resource_name: format!("{id}.bpmn"),
            bpmn_process_id: id,
            xml,
            final_element,
            measured_elements,
            needs_message,
        }
    }
}

enum Node {
    Start,
    End,
    Task,
    Exclusive { default: Option<&'static str> },
    Parallel,
    Message,
    Timer(&'static str),
}

/// A small BPMN writer: nodes and flows, with the incoming/outgoing references filled in.
struct Builder {
    nodes: Vec<(&'static str, Node)>,
    flows: Vec<(
        &'static str,
        &'static str,
        &'static str,
        Option<&'static str>,
    )>,
}

impl Builder {
    fn new() -> Self {
        Builder {
            nodes: Vec::new(),
            flows: Vec::new(),
        }
    }

    fn node(&mut self, id: &'static str, node: Node) -> &mut Self {
        self.nodes.push((id, node));
        self
    }

    fn flow(&mut self, id: &'static str, from: &'static str, to: &'static str) -> &mut Self {
        self.flows.push((id, from, to, None));
        self
    }

    fn cond(
        &mut self,
        id: &'static str,
        from: &'static str,
        to: &'static str,
        condition: &'static str,
    ) -> &mut Self {
        self.flows.push((id, from, to, Some(condition)));
        self
    }

    fn xml(&self, process_id: &str) -> String {
        let mut x = String::new();
        x.push_str(concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            "\n",
            r#"<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" "#,
            r#"xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" "#,
            r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" "#,
            r#"id="beeline-bench-definitions" targetNamespace="http://beeline.dev/bench">"#,
            "\n"
        ));
        let has_message = self.nodes.iter().any(|(_, n)| matches!(n, Node::Message));
        if has_message {
            let _ = writeln!(
                x,
                r#"  <bpmn:message id="benchMessage" name="{MESSAGE_NAME}"><bpmn:extensionElements><zeebe:subscription correlationKey="=benchKey" /></bpmn:extensionElements></bpmn:message>"#
            );
        }
        let _ = writeln!(
            x,
            r#"  <bpmn:process id="{process_id}" isExecutable="true">"#
        );
        for (id, node) in &self.nodes {
            let mut links = String::new();
            for (flow, _, to, _) in &self.flows {
                if to == id {
                    let _ = write!(links, "<bpmn:incoming>{flow}</bpmn:incoming>");
                }
            }
            for (flow, from, _, _) in &self.flows {
                if from == id {
                    let _ = write!(links, "<bpmn:outgoing>{flow}</bpmn:outgoing>");
                }
            }
            let _ = match node {
                Node::Start => writeln!(
                    x,
                    r#"    <bpmn:startEvent id="{id}">{links}</bpmn:startEvent>"#
                ),
                Node::End => writeln!(x, r#"    <bpmn:endEvent id="{id}">{links}</bpmn:endEvent>"#),
                Node::Task => writeln!(
                    x,
                    r#"    <bpmn:serviceTask id="{id}"><bpmn:extensionElements><zeebe:taskDefinition type="{JOB_TYPE}" /></bpmn:extensionElements>{links}</bpmn:serviceTask>"#
                ),
                Node::Exclusive { default } => {
                    let default = default
                        .map(|d| format!(r#" default="{d}""#))
                        .unwrap_or_default();
                    writeln!(
                        x,
                        r#"    <bpmn:exclusiveGateway id="{id}"{default}>{links}</bpmn:exclusiveGateway>"#
                    )
                }
                Node::Parallel => writeln!(
                    x,
                    r#"    <bpmn:parallelGateway id="{id}">{links}</bpmn:parallelGateway>"#
                ),
                Node::Message => writeln!(
                    x,
                    r#"    <bpmn:intermediateCatchEvent id="{id}">{links}<bpmn:messageEventDefinition messageRef="benchMessage" /></bpmn:intermediateCatchEvent>"#
                ),
                Node::Timer(duration) => writeln!(
                    x,
                    r#"    <bpmn:intermediateCatchEvent id="{id}">{links}<bpmn:timerEventDefinition><bpmn:timeDuration xsi:type="bpmn:tFormalExpression">{duration}</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>"#
                ),
            };
        }
        for (id, from, to, condition) in &self.flows {
            match condition {
                None => {
                    let _ = writeln!(
                        x,
                        r#"    <bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}" />"#
                    );
                }
                Some(c) => {
                    let _ = writeln!(
                        x,
                        r#"    <bpmn:sequenceFlow id="{id}" sourceRef="{from}" targetRef="{to}"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">{}</bpmn:conditionExpression></bpmn:sequenceFlow>"#,
                        xml_escape(c)
                    );
                }
            }
        }
        x.push_str("  </bpmn:process>\n</bpmn:definitions>\n");
        x
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn one_task(id: &str) -> String {
    Builder::new()
        .node("start", Node::Start)
        .node("task", Node::Task)
        .node("end", Node::End)
        .flow("f1", "start", "task")
        .flow("f2", "task", "end")
        .xml(id)
}

fn ten_tasks(id: &str) -> String {
    const TASKS: [&str; 10] = [
        "task1", "task2", "task3", "task4", "task5", "task6", "task7", "task8", "task9", "task10",
    ];
    const FLOWS: [&str; 11] = [
        "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10",
    ];
    let mut b = Builder::new();
    b.node("start", Node::Start);
    for task in TASKS {
        b.node(task, Node::Task);
    }
    b.node("end", Node::End);
    let mut prev = "start";
    for (i, task) in TASKS.iter().enumerate() {
        b.flow(FLOWS[i], prev, task);
        prev = task;
    }
    b.flow(FLOWS[10], prev, "end");
    b.xml(id)
}

/// ```text
/// start → validate → ◇amount>100 → approve ─┐
///                     └(default)→ auto ─────◇ → + ─→ message catch (benchKey) ─┐
///                                               ├─→ timer PT1S ───────────────+ → finish → end
///                                               └─→ enrich ───────────────────┘
/// ```
fn typical(id: &str) -> String {
    Builder::new()
        .node("start", Node::Start)
        .node("validate", Node::Task)
        .node(
            "decide",
            Node::Exclusive {
                default: Some("toAuto"),
            },
        )
        .node("approve", Node::Task)
        .node("auto", Node::Task)
        .node("merge", Node::Exclusive { default: None })
        .node("fork", Node::Parallel)
        .node("waitMessage", Node::Message)
        .node("wait1s", Node::Timer("PT1S"))
        .node("enrich", Node::Task)
        .node("join", Node::Parallel)
        .node("finish", Node::Task)
        .node("end", Node::End)
        .flow("f1", "start", "validate")
        .flow("f2", "validate", "decide")
        .cond("toApprove", "decide", "approve", "=amount > 100")
        .flow("toAuto", "decide", "auto")
        .flow("f3", "approve", "merge")
        .flow("f4", "auto", "merge")
        .flow("f5", "merge", "fork")
        .flow("f6", "fork", "waitMessage")
        .flow("f7", "fork", "wait1s")
        .flow("f8", "fork", "enrich")
        .flow("f9", "waitMessage", "join")
        .flow("f10", "wait1s", "join")
        .flow("f11", "enrich", "join")
        .flow("f12", "join", "finish")
        .flow("f13", "finish", "end")
        .xml(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_ends_with_its_final_task_and_names_its_elements() {
        for kind in [
            ProcessKind::OneTask,
            ProcessKind::TenTasks,
            ProcessKind::Typical,
        ] {
            let m = Model::new(kind);
            assert!(
                m.xml
                    .contains(&format!(r#"<bpmn:process id="{}""#, m.bpmn_process_id))
            );
            assert!(m.resource_name.ends_with(".bpmn"));
            let task = format!(r#"<bpmn:serviceTask id="{}">"#, m.final_element);
            assert!(m.xml.contains(&task), "{kind:?}");
            // The final task flows straight into the end event.
            let into_end = m.xml.lines().any(|l| {
                l.contains(&format!(
                    r#"sourceRef="{}" targetRef="end""#,
                    m.final_element
                ))
            });
            assert!(into_end, "{kind:?}");
            for e in m.measured_elements {
                assert!(m.xml.contains(&format!(r#"id="{e}""#)), "{kind:?} {e}");
            }
            // Balanced: every opened element is closed (a cheap well-formedness check).
            assert_eq!(
                m.xml.matches("<bpmn:serviceTask").count(),
                m.xml.matches("</bpmn:serviceTask>").count()
            );
        }
        let typical = Model::new(ProcessKind::Typical);
        assert!(typical.needs_message);
        assert!(typical.xml.contains("=amount &gt; 100"));
        assert!(typical.xml.contains("PT1S"));
        assert!(typical.xml.contains(r#"correlationKey="=benchKey""#));
        assert_eq!(
            Model::new(ProcessKind::TenTasks)
                .xml
                .matches("<bpmn:serviceTask")
                .count(),
            10
        );
    }
}
