//! BPMN 2.0 with Zeebe's extension elements: parser, validation, and the executable model
//! the engine runs.
//!
//! ```
//! let xml = br#"<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
//!     xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
//!   <bpmn:process id="order" isExecutable="true">
//!     <bpmn:startEvent id="start"/>
//!     <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="pay"/>
//!     <bpmn:serviceTask id="pay">
//!       <bpmn:extensionElements><zeebe:taskDefinition type="payment"/></bpmn:extensionElements>
//!     </bpmn:serviceTask>
//!   </bpmn:process>
//! </bpmn:definitions>"#;
//! let definitions = beeline_bpmn::parse(xml).unwrap();
//! let process = &definitions.processes[0];
//! let (_, task) = process.element_by_id("pay").unwrap();
//! assert_eq!(task.kind(), beeline_bpmn::ElementKind::ServiceTask);
//! ```
//!
//! Layout: `xml` reads the document into a tree, `parse` builds the model of each
//! executable process, `validate` applies the rules that look at a whole process, and
//! [`model`] is what the engine uses.

pub mod error;
pub mod model;
mod parse;
#[cfg(test)]
mod tests;
mod validate;
mod xml;

pub use error::{ParseError, ValidationError, ValidationErrors};
pub use model::*;
pub use parse::parse;
pub use xml::{Position, XmlError};
