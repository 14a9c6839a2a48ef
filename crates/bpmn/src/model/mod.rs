//! The executable model: what the engine runs.
//!
//! Shaped after Zeebe's `ExecutableProcess` / `ExecutableFlowNode`: every element of a
//! process lives in one flat arena indexed by [`ElementIndex`] (the process itself is
//! index 0), sequence flows in a second arena indexed by [`SequenceFlowIndex`], and all
//! references between them are indices, so the engine follows a flow, finds an element's
//! scope, its boundary events or a scope's start event in O(1). Ids map to indices through
//! one hash map. A `Process` is immutable once built; share it with `Arc`.

mod element;
mod event;
mod expression;
mod kind;
mod task;

pub use element::*;
pub use event::*;
pub use expression::*;
pub use kind::*;
pub use task::*;

use std::collections::HashMap;
use std::ops::Index;
use std::sync::Arc;

/// Index of an element in its [`Process`]. Only meaningful for the process it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ElementIndex(pub u32);

impl ElementIndex {
    /// The process itself.
    pub const PROCESS: ElementIndex = ElementIndex(0);

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a sequence flow in its [`Process`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SequenceFlowIndex(pub u32);

impl SequenceFlowIndex {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What an id names in a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementRef {
    Element(ElementIndex),
    SequenceFlow(SequenceFlowIndex),
}

/// The result of parsing one BPMN file.
#[derive(Debug, Clone)]
pub struct Definitions {
    /// `definitions/@id`.
    pub id: Option<String>,
    /// The executable processes, in document order; each is validated.
    pub processes: Vec<Arc<Process>>,
    /// Ids of the processes with `isExecutable` not `true`: not deployed, not validated.
    pub non_executable_process_ids: Vec<String>,
}

/// One executable process.
#[derive(Debug, Clone)]
pub struct Process {
    /// The BPMN process id (`process/@id`), Zeebe's `bpmnProcessId`.
    pub bpmn_process_id: String,
    pub name: Option<String>,
    /// `zeebe:versionTag value`.
    pub version_tag: Option<String>,
    /// `zeebe:jobPriorityDefinition` on the process: the default for its jobs.
    pub job_priority: Option<ExprOrStatic<i32>>,
    /// `zeebe:userTaskForm`s embedded in the process.
    pub user_task_forms: Vec<UserTaskForm>,
    pub(crate) elements: Vec<Element>,
    pub(crate) sequence_flows: Vec<SequenceFlow>,
    pub(crate) ids: HashMap<String, ElementRef>,
    pub(crate) expressions: Vec<ExpressionEntry>,
}

impl Process {
    /// The process element (index 0); its `scope` lists the top-level elements.
    pub fn root(&self) -> &Element {
        &self[ElementIndex::PROCESS]
    }

    /// All elements; the position in the slice is the [`ElementIndex`].
    pub fn elements(&self) -> &[Element] {
        &self.elements
    }

    /// All elements with their indices.
    pub fn iter(&self) -> impl Iterator<Item = (ElementIndex, &Element)> + '_ {
        (0u32..).map(ElementIndex).zip(self.elements.iter())
    }

    pub fn element(&self, index: ElementIndex) -> Option<&Element> {
        self.elements.get(index.index())
    }

    /// All sequence flows; the position in the slice is the [`SequenceFlowIndex`].
    pub fn sequence_flows(&self) -> &[SequenceFlow] {
        &self.sequence_flows
    }

    pub fn sequence_flow(&self, index: SequenceFlowIndex) -> Option<&SequenceFlow> {
        self.sequence_flows.get(index.index())
    }

    /// What an id names: an element or a sequence flow.
    pub fn lookup(&self, id: &str) -> Option<ElementRef> {
        self.ids.get(id).copied()
    }

    /// The element with this id (not a sequence flow).
    pub fn element_by_id(&self, id: &str) -> Option<(ElementIndex, &Element)> {
        match self.lookup(id)? {
            ElementRef::Element(index) => Some((index, self.element(index)?)),
            ElementRef::SequenceFlow(_) => None,
        }
    }

    /// Every FEEL expression of the process, indexed by [`ExpressionId`]: what the engine
    /// compiles at deployment.
    pub fn expressions(&self) -> &[ExpressionEntry] {
        &self.expressions
    }

    pub fn expression(&self, id: ExpressionId) -> Option<&ExpressionEntry> {
        self.expressions.get(id.index())
    }

    /// The flow scope of an element (`None` for the process).
    pub fn scope_of(&self, index: ElementIndex) -> Option<&Element> {
        self.element(self.element(index)?.parent?)
    }

    /// Validation errors for the elements whose kind the engine does not support, one per
    /// element and kind (a multi-instance activity also needs
    /// [`ElementKind::MultiInstanceBody`]).
    pub fn unsupported_elements(
        &self,
        supported: &ElementKindSet,
    ) -> Vec<crate::error::ValidationError> {
        crate::validate::unsupported_elements(self, supported)
    }
}

impl Index<ElementIndex> for Process {
    type Output = Element;

    /// Panics if the index is not from this process.
    fn index(&self, index: ElementIndex) -> &Element {
        &self.elements[index.index()]
    }
}

impl Index<SequenceFlowIndex> for Process {
    type Output = SequenceFlow;

    /// Panics if the index is not from this process.
    fn index(&self, index: SequenceFlowIndex) -> &SequenceFlow {
        &self.sequence_flows[index.index()]
    }
}

// The engine shares processes between threads (`Arc<Process>` in a cache).
const _: () = {
    const fn assert_shareable<T: Clone + Send + Sync + 'static>() {}
    assert_shareable::<Process>();
    assert_shareable::<Definitions>();
};
