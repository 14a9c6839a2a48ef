//! The tables of secondary storage: columns, keys, and folded rows waiting to be written.
//!
//! Every table has a `position` column (the newest record folded into the row) and a
//! `partition_id`. Writes are upserts keyed by the table's key: a column whose new value is
//! NULL keeps what is stored (a record that does not know a start date leaves it alone), and a
//! row older than the stored one (a lower position) changes nothing.

use std::collections::BTreeMap;

/// A cell.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
}

impl Value {
    pub fn text(s: impl Into<String>) -> Self {
        Value::Text(s.into())
    }

    /// An optional key: a negative key (Zeebe's `-1`) is no key.
    pub fn key(key: i64) -> Self {
        if key < 0 {
            Value::Null
        } else {
            Value::Int(key)
        }
    }

    pub fn bool(b: bool) -> Self {
        Value::Int(i64::from(b))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// One table: its name, columns (in row order) and the leading columns that form its key.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// How many leading columns form the primary key.
    pub key_columns: usize,
    /// Secondary indexes: (name, columns).
    pub indexes: &'static [(&'static str, &'static str)],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Int,
    Text,
}

#[derive(Debug)]
pub struct Column {
    pub name: &'static str,
    pub ty: Type,
}

const fn int(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Int,
    }
}

const fn text(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Text,
    }
}

impl Table {
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Index of the `position` column (every table has one).
    pub fn position_column(&self) -> usize {
        self.column("position").unwrap_or(self.columns.len() - 1)
    }
}

macro_rules! tables {
    ($( $id:ident = $index:literal: $name:literal keys $keys:literal [$($col:expr),* $(,)?] indexes [$($ix:expr),* $(,)?]; )*) => {
        $(
            pub const $id: Table = Table {
                name: $name,
                columns: &[$($col),*],
                key_columns: $keys,
                indexes: &[$($ix),*],
            };
        )*
        /// Every table, by its index in a [`Batch`].
        pub const TABLES: &[&Table] = &[$(&$id),*];
        /// The index of each table in [`TABLES`].
        pub mod index {
            $( pub const $id: usize = $index; )*
        }
    };
}

tables! {
    PROCESS_DEFINITION = 0: "process_definition" keys 1 [
        int("key"), text("bpmn_process_id"), text("name"), int("version"), text("version_tag"),
        text("resource_name"), text("tenant_id"), text("xml"), int("partition_id"), int("position"),
        int("deployment_key"), text("start_form_id"), text("start_form_binding"),
        text("start_form_version_tag"),
    ] indexes [("process_definition_by_id", "bpmn_process_id, version")];
    PROCESS_INSTANCE = 1: "process_instance" keys 1 [
        int("key"), text("bpmn_process_id"), int("process_definition_key"), int("version"),
        text("version_tag"), text("name"), text("state"), int("start_date"), int("end_date"),
        int("parent_process_instance_key"), int("parent_element_instance_key"), text("tenant_id"),
        text("tags"), int("partition_id"), int("position"),
    ] indexes [
        ("process_instance_by_state", "state, bpmn_process_id, key"),
        ("process_instance_by_process", "bpmn_process_id, key"),
        ("process_instance_by_definition", "process_definition_key, key"),
        ("process_instance_by_end", "end_date"),
        ("process_instance_by_parent", "parent_process_instance_key"),
    ];
    ELEMENT_INSTANCE = 2: "element_instance" keys 1 [
        int("key"), int("process_instance_key"), int("process_definition_key"),
        text("bpmn_process_id"), text("element_id"), text("element_name"), text("type"),
        text("state"), int("start_date"), int("end_date"), int("flow_scope_key"),
        text("tenant_id"), int("partition_id"), int("position"),
    ] indexes [("element_instance_by_instance", "process_instance_key, element_id")];
    SEQUENCE_FLOW = 3: "sequence_flow" keys 2 [
        int("process_instance_key"), text("element_id"), int("process_definition_key"),
        text("bpmn_process_id"), text("tenant_id"), int("partition_id"), int("position"),
    ] indexes [];
    VARIABLE = 4: "variable" keys 1 [
        int("key"), text("name"), text("value"), int("scope_key"), int("process_instance_key"),
        int("process_definition_key"), text("bpmn_process_id"), text("tenant_id"),
        int("partition_id"), int("position"),
    ] indexes [
        ("variable_by_instance", "process_instance_key"),
        ("variable_by_scope", "scope_key, name"),
        ("variable_by_name", "name"),
    ];
    INCIDENT = 5: "incident" keys 1 [
        int("key"), text("error_type"), text("error_message"), text("state"),
        int("creation_time"), text("bpmn_process_id"), int("process_definition_key"),
        int("process_instance_key"), text("element_id"), int("element_instance_key"),
        int("job_key"), text("tenant_id"), int("partition_id"), int("position"),
    ] indexes [
        ("incident_by_instance", "process_instance_key, state"),
        ("incident_by_element_instance", "element_instance_key, state"),
        ("incident_by_state", "state"),
    ];
    JOB = 6: "job" keys 1 [
        int("key"), text("type"), text("worker"), text("state"), text("kind"),
        text("listener_event_type"), int("retries"), text("error_message"), text("error_code"),
        int("deadline"), int("end_time"), text("custom_headers"), int("process_definition_key"),
        text("bpmn_process_id"), int("process_instance_key"), text("element_id"),
        int("element_instance_key"), text("tenant_id"), int("has_failed_with_retries_left"),
        int("partition_id"), int("position"),
    ] indexes [
        ("job_by_instance", "process_instance_key"),
        ("job_by_type", "type, state"),
    ];
    DECISION_DEFINITION = 7: "decision_definition" keys 1 [
        int("key"), text("decision_id"), text("name"), int("version"), text("version_tag"),
        int("decision_requirements_key"), text("decision_requirements_id"), text("tenant_id"),
        int("partition_id"), int("position"),
    ] indexes [("decision_definition_by_id", "decision_id, version")];
    DECISION_REQUIREMENTS = 8: "decision_requirements" keys 1 [
        int("key"), text("decision_requirements_id"), text("name"), int("version"),
        text("resource_name"), text("xml"), text("tenant_id"), int("partition_id"),
        int("position"),
    ] indexes [];
    DECISION_INSTANCE = 9: "decision_instance" keys 1 [
        text("id"), int("key"), text("state"), int("evaluation_date"),
        text("evaluation_failure"), text("decision_definition_id"),
        int("decision_definition_key"), text("decision_definition_name"),
        int("decision_definition_version"), text("decision_definition_type"),
        int("decision_requirements_key"), text("decision_requirements_id"),
        int("root_decision_definition_key"), text("result"), text("evaluated_inputs"),
        text("matched_rules"), int("process_definition_key"), int("process_instance_key"),
        int("element_instance_key"), text("element_id"), text("tenant_id"),
        int("partition_id"), int("position"),
    ] indexes [
        ("decision_instance_by_instance", "process_instance_key"),
        ("decision_instance_by_key", "key"),
    ];
    USER_TASK = 10: "user_task" keys 1 [
        int("key"), text("element_id"), text("name"), text("state"), text("assignee"),
        text("candidate_groups"), text("candidate_users"), int("due_date"),
        int("follow_up_date"), int("creation_date"), int("completion_date"), int("priority"),
        int("form_key"), text("external_form_reference"), text("custom_headers"),
        int("process_definition_key"), text("bpmn_process_id"), text("process_name"),
        int("process_definition_version"), int("process_instance_key"),
        int("element_instance_key"), text("tenant_id"), int("partition_id"), int("position"),
    ] indexes [
        ("user_task_by_instance", "process_instance_key"),
        ("user_task_by_state", "state, assignee"),
    ];
    FORM = 11: "form" keys 1 [
        int("key"), text("form_id"), int("version"), text("version_tag"), text("resource_name"),
        text("schema"), text("tenant_id"), int("deployment_key"), int("deleted"),
        int("partition_id"), int("position"),
    ] indexes [("form_by_id", "form_id, tenant_id, version")];
}

/// The tables that belong to a process instance (by `process_instance_key`) and go with it.
pub const OWNED_BY_INSTANCE: &[&Table] = &[
    &ELEMENT_INSTANCE,
    &SEQUENCE_FLOW,
    &VARIABLE,
    &INCIDENT,
    &JOB,
    &DECISION_INSTANCE,
    &USER_TASK,
];

/// Rows waiting to be written, folded per table and key.
#[derive(Debug)]
pub struct Batch {
    /// One map per table of [`TABLES`], by key.
    pub tables: Vec<BTreeMap<Vec<Value>, Vec<Value>>>,
    /// The position of the newest record folded in (`-1`: none).
    pub position: i64,
    /// The timestamp of the oldest record folded in (`i64::MAX`: none), for the export lag.
    pub oldest: i64,
    rows: usize,
}

pub const TABLE_COUNT: usize = 12;
const _: () = assert!(TABLES.len() == TABLE_COUNT);

impl Default for Batch {
    fn default() -> Self {
        Self::new()
    }
}

impl Batch {
    pub fn new() -> Self {
        Self {
            tables: vec![BTreeMap::new(); TABLE_COUNT],
            position: -1,
            oldest: i64::MAX,
            rows: 0,
        }
    }

    /// Folds `row` into the pending row of the same key: its non-NULL cells replace the
    /// pending ones.
    pub fn fold(&mut self, table: usize, row: Vec<Value>) {
        let keys = TABLES[table].key_columns;
        let key = row[..keys].to_vec();
        match self.tables[table].get_mut(&key) {
            Some(pending) => {
                for (cell, new) in pending.iter_mut().zip(row) {
                    if !new.is_null() {
                        *cell = new;
                    }
                }
            }
            None => {
                self.tables[table].insert(key, row);
                self.rows += 1;
            }
        }
    }

    /// Rows pending, over all tables.
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The rows of a table being folded, for a fold that reads what is pending.
    pub fn pending(&self, table: usize, key: &[Value]) -> Option<&Vec<Value>> {
        self.tables[table].get(key)
    }
}
