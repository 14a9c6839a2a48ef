//! The store exporter: one per partition, folding records into a batch that it hands to the
//! store's [`Writer`] when the director says it caught up (or the batch is full). The writer
//! writes the rows and the partition's position in one transaction and then acknowledges, so
//! what is acknowledged is stored and what is stored says how far it got.

use std::future::Future;

use beeline_exporter::{Controller, ExportError, Exporter};
use beeline_protocol::Record;

use crate::EXPORTER_ID;
use crate::projection::{DefinitionNames, Definitions, Projection};
use crate::rows::Batch;

/// One transaction's worth of rows from one partition.
#[derive(Debug)]
pub struct Flush {
    pub partition_id: u16,
    pub batch: Batch,
    /// Acknowledged once the batch is written.
    pub controller: Controller,
}

/// A definition as the store keeps it: key, BPMN process id, version tag, XML.
pub type StoredDefinition = (i64, String, String, String);

/// The write side of a store, shared by the exporters of every partition.
pub trait Writer: Send + Sync + 'static {
    /// The position the store holds for `partition` (`None`: nothing written yet).
    fn position(&self, partition: u16) -> impl Future<Output = Result<Option<i64>, String>> + Send;

    /// The process definitions stored, so instances exported after a restart get their
    /// names.
    fn definitions(&self) -> impl Future<Output = Result<Vec<StoredDefinition>, String>> + Send;

    /// Queues `flush` if the writer has room; gives it back if not.
    fn try_write(&self, flush: Flush) -> Result<(), Flush>;

    /// Queues `flush`, waiting for room. A store that fails keeps retrying the write itself
    /// (and says so in its metrics and log); this fails only when the writer is gone.
    fn write(&self, flush: Flush) -> impl Future<Output = Result<(), String>> + Send;
}

/// Exports one partition into a store.
pub struct StoreExporter<W> {
    writer: std::sync::Arc<W>,
    projection: Projection,
    definitions: Definitions,
    batch: Batch,
    controller: Option<Controller>,
    /// A batch this large is handed over at once, waiting for the writer if need be: what a
    /// partition holds back is bounded.
    max_rows: usize,
}

/// Rows a partition's exporter folds before it waits for the writer. Default.
pub const MAX_PENDING_ROWS: usize = 20_000;

impl<W: Writer> StoreExporter<W> {
    pub fn new(writer: std::sync::Arc<W>, definitions: Definitions, max_rows: usize) -> Self {
        Self {
            writer,
            projection: Projection::new(definitions.clone()),
            definitions,
            batch: Batch::new(),
            controller: None,
            max_rows: max_rows.max(1),
        }
    }

    fn take(&mut self) -> Option<Flush> {
        let controller = self.controller.clone()?;
        if self.batch.position < 0 {
            return None;
        }
        Some(Flush {
            partition_id: controller.partition_id(),
            batch: std::mem::take(&mut self.batch),
            controller,
        })
    }
}

impl<W: Writer> Exporter for StoreExporter<W> {
    fn id(&self) -> &str {
        EXPORTER_ID
    }

    async fn open(&mut self, controller: Controller) -> Result<Option<i64>, ExportError> {
        let partition = controller.partition_id();
        let position = self
            .writer
            .position(partition)
            .await
            .map_err(ExportError::Retry)?;
        let known = !self
            .definitions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty();
        if !known {
            let stored = self
                .writer
                .definitions()
                .await
                .map_err(ExportError::Retry)?;
            let mut definitions = self.definitions.write().unwrap_or_else(|e| e.into_inner());
            for (key, process_id, version_tag, xml) in stored {
                definitions.entry(key).or_insert_with(|| {
                    std::sync::Arc::new(DefinitionNames::from_xml(
                        xml.as_bytes(),
                        &process_id,
                        &version_tag,
                    ))
                });
            }
        }
        self.batch = Batch::new();
        self.controller = Some(controller);
        // An empty store (new, deleted, or moved aside when damaged) holds nothing: the
        // director rebuilds it from the start of the log, and reports what the log no longer
        // holds, rather than going on after the partition's acknowledged position.
        Ok(Some(position.unwrap_or(-1)))
    }

    async fn export(&mut self, record: &Record) -> Result<(), ExportError> {
        self.projection.fold(record, &mut self.batch);
        if self.batch.rows() >= self.max_rows
            && let Some(flush) = self.take()
        {
            self.writer.write(flush).await.map_err(ExportError::Retry)?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), ExportError> {
        if let Some(flush) = self.take()
            && let Err(flush) = self.writer.try_write(flush)
        {
            // The writer is busy: keep folding; the next flush tries again.
            self.batch = flush.batch;
        }
        Ok(())
    }
}
