//! Deployed processes as the engine runs them: the parsed BPMN model with every FEEL
//! expression compiled once, cached by definition key.
//!
//! The cache is not state: it is rebuilt from the stored resource (a `ProcessRecord`) when a
//! definition is first used after a restart.

mod transform;

pub use transform::{TransformedProcess, transform_bpmn};

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use beeline_bpmn::{Element, ElementData, ElementIndex, EventDefinition, ExpressionId, Process};
use beeline_feel::Expression;
use beeline_protocol::value::ProcessInstanceRecord;

use crate::error::ProcessingError;
use crate::state::EngineState;

/// A process definition ready to run.
#[derive(Debug)]
pub struct DeployedProcess {
    pub key: i64,
    pub bpmn_process_id: String,
    pub version: i32,
    pub tenant_id: String,
    /// The deployment it came with (a call activity's `deployment` binding).
    pub deployment_key: i64,
    /// `zeebe:versionTag`, or empty.
    pub version_tag: String,
    pub model: Arc<Process>,
    /// Compiled expressions, indexed by [`ExpressionId`].
    pub expressions: Vec<Arc<Expression>>,
}

impl DeployedProcess {
    pub fn expression(&self, id: ExpressionId) -> Option<&Arc<Expression>> {
        self.expressions.get(id.index())
    }

    pub fn element(&self, id: &str) -> Option<ElementIndex> {
        self.model.element_by_id(id).map(|(index, _)| index)
    }

    /// Whether an event (a message, timer or signal start event) can start instances: only
    /// such an instance holds a start trigger, or a message's correlation key.
    pub fn started_by_events(&self) -> bool {
        let Some(scope) = &self.model.root().scope else {
            return false;
        };
        scope.start_events.iter().any(|start| {
            self.model[*start]
                .event_definition()
                .is_some_and(|event| !matches!(event, EventDefinition::None))
        })
    }
}

/// Whether an event can wait for an instance of this element (a PROCESS_EVENT TRIGGERING
/// targets it): start, boundary and intermediate catch events and receive tasks. Instances of
/// other elements never hold a trigger and need not look for one.
pub(crate) fn can_be_triggered(element: &Element) -> bool {
    matches!(
        element.data,
        ElementData::StartEvent(_)
            | ElementData::BoundaryEvent(_)
            | ElementData::IntermediateCatchEvent(_)
            | ElementData::ReceiveTask(_)
    )
}

/// Zeebe's element type of a multi-instance body.
pub(crate) const MULTI_INSTANCE_BODY: &str = "MULTI_INSTANCE_BODY";

/// Which part of its element an element instance is. A multi-instance activity runs as a body
/// (Zeebe's `MULTI_INSTANCE_BODY`, with the activity's id) that holds its boundary events and
/// outgoing flows, and inner instances of the activity itself, one per item, whose flow
/// scope is the body; every other element runs as itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InstanceRole {
    Element,
    MultiInstanceBody,
    MultiInstanceInner,
}

impl InstanceRole {
    pub fn of(element: &Element, record: &ProcessInstanceRecord) -> Self {
        if element.multi_instance.is_none() {
            InstanceRole::Element
        } else if record.bpmn_element_type == MULTI_INSTANCE_BODY {
            InstanceRole::MultiInstanceBody
        } else {
            InstanceRole::MultiInstanceInner
        }
    }

    /// Whether the instance has the element's boundary events and outgoing flows (the inner
    /// instances of a multi-instance activity leave both to their body).
    pub fn has_boundary_and_flows(self) -> bool {
        self != InstanceRole::MultiInstanceInner
    }

    /// Whether the instance does what the element does: maps its variables, waits for its
    /// own events, contains its children (a multi-instance body only runs the inner
    /// instances).
    pub fn runs_element(self) -> bool {
        self != InstanceRole::MultiInstanceBody
    }
}

/// The `bpmnElementType` and `bpmnEventType` of an element activated from outside it (by a
/// flow, an event, a start instruction): a multi-instance activity starts as its body.
pub(crate) fn element_types(element: &Element) -> (&'static str, &'static str) {
    if element.multi_instance.is_some() {
        return (MULTI_INSTANCE_BODY, "UNSPECIFIED");
    }
    let kind = element.kind();
    (kind.zeebe_element_type(), kind.zeebe_event_type())
}

/// A map filled while batches run, whose changes belong to their batch like state's: what a
/// batch that is rolled back put in is taken out again. A definition read from a rolled-back
/// deployment must not stay: its key is given again to the next one.
#[derive(Debug)]
struct BatchMap<V> {
    entries: RefCell<HashMap<i64, V>>,
    /// Keys inserted by the open batch, which a rollback removes.
    added: RefCell<Vec<i64>>,
}

impl<V> Default for BatchMap<V> {
    fn default() -> Self {
        Self {
            entries: RefCell::new(HashMap::new()),
            added: RefCell::new(Vec::new()),
        }
    }
}

impl<V: Clone> BatchMap<V> {
    fn get(&self, key: i64) -> Option<V> {
        self.entries.borrow().get(&key).cloned()
    }

    fn insert(&self, key: i64, value: V) {
        if self.entries.borrow_mut().insert(key, value).is_none() {
            self.added.borrow_mut().push(key);
        }
    }

    /// A removal needs no undo: what is not cached is read again from state.
    fn remove(&self, key: i64) {
        self.entries.borrow_mut().remove(&key);
    }

    fn commit(&self) {
        self.added.borrow_mut().clear();
    }

    fn rollback(&self) {
        let added = std::mem::take(&mut *self.added.borrow_mut());
        let mut entries = self.entries.borrow_mut();
        for key in added {
            entries.remove(&key);
        }
    }

    fn count(&self) -> usize {
        self.entries.borrow().len()
    }
}

/// Parsed decision requirements graphs by key, filled lazily like processes.
#[derive(Debug, Default)]
pub struct DecisionCache {
    models: BatchMap<beeline_dmn::DmnModel>,
}

impl DecisionCache {
    pub fn get(&self, key: i64) -> Option<beeline_dmn::DmnModel> {
        self.models.get(key)
    }

    pub fn insert(&self, key: i64, model: beeline_dmn::DmnModel) {
        self.models.insert(key, model);
    }
}

/// Everything the engine keeps parsed in memory, rebuilt from state on demand. Its changes
/// follow the batch that made them ([`Caches::commit`], [`Caches::rollback`]).
#[derive(Debug, Default)]
pub struct Caches {
    pub processes: ProcessCache,
    pub decisions: DecisionCache,
}

impl Caches {
    /// Keeps what the batch that just succeeded put in.
    pub fn commit(&self) {
        self.processes.processes.commit();
        self.decisions.models.commit();
    }

    /// Takes out what the batch that was rolled back put in.
    pub fn rollback(&self) {
        self.processes.processes.rollback();
        self.decisions.models.rollback();
    }

    /// How many definitions and decision graphs are cached.
    pub fn count(&self) -> usize {
        self.processes.processes.count() + self.decisions.models.count()
    }
}

/// Deployed processes by definition key, filled lazily. One per partition; only its processing
/// loop uses it.
#[derive(Debug, Default)]
pub struct ProcessCache {
    processes: BatchMap<Arc<DeployedProcess>>,
}

impl ProcessCache {
    pub fn get(&self, key: i64) -> Option<Arc<DeployedProcess>> {
        self.processes.get(key)
    }

    pub fn insert(&self, process: Arc<DeployedProcess>) {
        self.processes.insert(process.key, process);
    }

    /// Forgets a deleted definition. Harmless if the deletion is rolled back: the next use
    /// rebuilds it from state.
    pub fn remove(&self, key: i64) {
        self.processes.remove(key);
    }
}

/// Whether an element waits for tokens from several incoming flows (a joining parallel or
/// inclusive gateway).
pub(crate) fn is_joining(process: &Process, index: ElementIndex) -> bool {
    let element = &process[index];
    matches!(
        element.data,
        ElementData::ParallelGateway | ElementData::InclusiveGateway(_)
    ) && element.incoming.len() > 1
}

/// The deployed process an element instance record belongs to.
pub(crate) fn deployed(
    state: &EngineState<'_>,
    record: &ProcessInstanceRecord,
) -> Result<Arc<DeployedProcess>, ProcessingError> {
    state
        .processes()
        .deployed(record.process_definition_key)?
        .ok_or_else(|| {
            ProcessingError::Internal(format!(
                "process definition {} is not deployed",
                record.process_definition_key
            ))
        })
}

/// The deployed process and the element an element instance record is about.
pub(crate) fn deployed_element(
    state: &EngineState<'_>,
    record: &ProcessInstanceRecord,
) -> Result<(Arc<DeployedProcess>, ElementIndex), ProcessingError> {
    let process = deployed(state, record)?;
    let index = process.element(&record.element_id).ok_or_else(|| {
        ProcessingError::Internal(format!(
            "element '{}' is not in process '{}'",
            record.element_id, process.bpmn_process_id
        ))
    })?;
    Ok((process, index))
}
