//! The conformance suite against a store in memory, plain and failing every few calls.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use beeline_protocol::Record;

use crate::conformance::{self, Subject};
use crate::{Controller, ExportError, Exporter};

/// A store: the latest intent of each (value type, key), and the position it holds.
#[derive(Default, Clone)]
struct Target {
    rows: BTreeMap<(String, i64), String>,
    position: Option<i64>,
}

struct MemorySubject {
    target: Arc<Mutex<Target>>,
    /// Fail every n-th call (0: never).
    fail_every: u64,
    calls: Arc<AtomicU64>,
}

struct MemoryExporter {
    target: Arc<Mutex<Target>>,
    pending: Vec<Record>,
    controller: Option<Controller>,
    fail_every: u64,
    calls: Arc<AtomicU64>,
}

impl MemoryExporter {
    fn maybe_fail(&self) -> Result<(), ExportError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if self.fail_every > 0 && call.is_multiple_of(self.fail_every) {
            return Err(ExportError::Retry(format!("call {call} fails")));
        }
        Ok(())
    }
}

impl Exporter for MemoryExporter {
    fn id(&self) -> &str {
        "memory"
    }

    async fn open(&mut self, controller: Controller) -> Result<Option<i64>, ExportError> {
        self.maybe_fail()?;
        self.controller = Some(controller);
        Ok(self.target.lock().unwrap().position)
    }

    async fn export(&mut self, record: &Record) -> Result<(), ExportError> {
        self.maybe_fail()?;
        self.pending.push(record.clone());
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), ExportError> {
        self.maybe_fail()?;
        let Some(last) = self.pending.last().map(|r| r.position) else {
            return Ok(());
        };
        let mut target = self.target.lock().unwrap();
        for record in self.pending.drain(..) {
            if record.is_event() {
                target.rows.insert(
                    (record.value_type().name().to_owned(), record.key),
                    record.intent.name().to_owned(),
                );
            }
        }
        target.position = Some(target.position.map_or(last, |p| p.max(last)));
        if let Some(controller) = &self.controller {
            controller.acknowledge(last);
        }
        Ok(())
    }
}

impl Subject for MemorySubject {
    type Exporter = MemoryExporter;

    fn exporter(&self) -> MemoryExporter {
        MemoryExporter {
            target: self.target.clone(),
            pending: Vec::new(),
            controller: None,
            fail_every: self.fail_every,
            calls: self.calls.clone(),
        }
    }

    fn contents(&self) -> String {
        let target = self.target.lock().unwrap();
        target
            .rows
            .iter()
            .map(|((kind, key), intent)| format!("{kind} {key} {intent}\n"))
            .collect()
    }
}

fn subject(fail_every: u64) -> MemorySubject {
    MemorySubject {
        target: Arc::default(),
        fail_every,
        calls: Arc::default(),
    }
}

#[test]
fn a_store_in_memory_conforms() {
    conformance::run_all(|| subject(0));
}

#[test]
fn an_exporter_that_keeps_failing_gets_every_record_in_order_all_the_same() {
    conformance::delivers_every_record_in_order(&|| subject(3));
    conformance::loses_nothing_when_killed(&|| subject(4));
}

#[test]
fn a_store_in_memory_that_lost_its_newest_commits_gets_them_again() {
    conformance::rebuilds_what_the_store_lost(
        &|| subject(0),
        |subject| subject.target.lock().unwrap().clone(),
        |subject, saved| *subject.target.lock().unwrap() = saved,
    );
}
