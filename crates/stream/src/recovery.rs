//! Opening a partition: restore the latest snapshot, replay the log after it, start the loop.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use beeline_engine::{Engine, EngineConfig, JobPush, ReplayProgress};
use beeline_log::{Journal, JournalReader};
use beeline_protocol::Record;
use beeline_protocol::codec::decode_batch;
use beeline_state::Store;
use beeline_state::snapshot::SnapshotStore;
use tokio::sync::{broadcast, mpsc, watch};

use crate::clock::Clock;
use crate::config::PartitionConfig;
use crate::error::OpenError;
use crate::exporters::ExporterPositions;
use crate::handle::{PartitionHandle, PartitionStatus};
use crate::metrics::PartitionMetrics;
use crate::processor::{Recovered, StreamProcessor};
use crate::router::CommandRouter;

/// Opens the state store: from a snapshot's checkpoint directory, or empty when there is none.
pub trait StoreOpener {
    fn open(&self, checkpoint: Option<&Path>) -> beeline_state::Result<Arc<dyn Store>>;
}

impl<F> StoreOpener for F
where
    F: Fn(Option<&Path>) -> beeline_state::Result<Arc<dyn Store>>,
{
    fn open(&self, checkpoint: Option<&Path>) -> beeline_state::Result<Arc<dyn Store>> {
        self(checkpoint)
    }
}

pub struct Partition;

/// Records replayed per state write while recovering.
const REPLAY_CHUNK: usize = 4096;

impl Partition {
    /// Recovers the partition and starts its processing loop on the current Tokio runtime.
    ///
    /// Recovery refuses to serve wrong data: a snapshot that fails verification, an
    /// undecodable log entry or a log that no longer reaches back to the snapshot stop it with
    /// an error naming the file and offset or position.
    pub fn open<J: Journal>(
        config: PartitionConfig,
        journal: J,
        snapshots: SnapshotStore,
        store_opener: &dyn StoreOpener,
        clock: Arc<dyn Clock>,
        router: Option<Arc<dyn CommandRouter>>,
    ) -> Result<PartitionHandle, OpenError>
    where
        J::Reader: 'static,
    {
        let partition = config.partition_id;
        let state_error = |source| OpenError::State { partition, source };
        let replay_error = |reason: String| OpenError::Replay { partition, reason };

        let snapshot = snapshots.latest().map_err(state_error)?;
        if let Some(snapshot) = &snapshot {
            SnapshotStore::verify(snapshot).map_err(state_error)?;
        }
        let store = store_opener
            .open(snapshot.as_ref().map(|s| s.data_dir()).as_deref())
            .map_err(state_error)?;
        let (exporters, removed) =
            ExporterPositions::load(store.as_ref(), &config.exporters).map_err(state_error)?;
        for (exporter, position) in removed {
            tracing::info!(
                partition,
                exporter,
                position,
                "exporter no longer configured; its position no longer holds back log compaction"
            );
        }
        let exporters = Arc::new(exporters);
        let engine = Engine::new(EngineConfig {
            partition_id: partition,
            partition_count: config.partition_count.max(partition),
            max_batch_records: config.max_batch_records,
            max_batch_bytes: config.max_batch_bytes,
            max_message_size: config.max_message_size,
            job_push: config
                .job_streams
                .clone()
                .map(|streams| streams as Arc<dyn JobPush>),
        });
        let replayed = replay(&engine, &journal, store.as_ref()).map_err(replay_error)?;
        tracing::info!(
            partition,
            snapshot = snapshot.as_ref().map(|s| s.position),
            replayed_records = replayed.records,
            unprocessed_commands = replayed.unprocessed.len(),
            "partition recovered"
        );

        let (commands_tx, commands_rx) = mpsc::channel(config.inbox_capacity.max(1));
        let (control_tx, control_rx) = mpsc::channel(16);
        let (status_tx, status_rx) = watch::channel(PartitionStatus::Healthy);
        let metrics = Arc::new(PartitionMetrics::default());
        let (jobs_available, _) = broadcast::channel(256);
        let processor = StreamProcessor::new(Recovered {
            config,
            journal,
            store,
            engine,
            snapshots,
            clock,
            metrics: metrics.clone(),
            status: status_tx,
            next_position: replayed.next_position,
            unprocessed: replayed.unprocessed,
            router,
            jobs_available: jobs_available.clone(),
            exporters: exporters.clone(),
        });
        tokio::spawn(processor.run(commands_rx, control_rx));
        Ok(PartitionHandle {
            partition_id: partition,
            commands: commands_tx,
            control: control_tx,
            status: status_rx,
            metrics,
            jobs_available,
            exporters,
        })
    }
}

struct Replayed {
    next_position: i64,
    unprocessed: VecDeque<Record>,
    records: u64,
}

/// Applies the events after the store's last processed position and finds the commands that
/// still wait for processing.
fn replay<J: Journal>(engine: &Engine, journal: &J, store: &dyn Store) -> Result<Replayed, String> {
    let snapshot_position = engine
        .last_processed_position(store)
        .map_err(|e| e.to_string())?;
    let mut progress = ReplayProgress {
        snapshot_position,
        last_processed_position: snapshot_position,
    };
    let mut reader = journal.reader();
    reader
        .seek_to_asqn((snapshot_position + 1).max(0) as u64)
        .map_err(|e| e.to_string())?;
    let mut replayed = Replayed {
        next_position: 1,
        unprocessed: VecDeque::new(),
        records: 0,
    };
    let mut first = true;
    let mut chunk: Vec<Record> = Vec::new();
    while let Some(entry) = reader.next_entry() {
        let entry = entry.map_err(|e| e.to_string())?;
        // Raft's own entries (a leader's blank entry, membership changes) hold no records.
        if !entry.kind.carries_records() {
            continue;
        }
        let records = decode_batch(&entry.data, entry.asqn as i64).map_err(|e| {
            format!(
                "log entry {} (position {}) is undecodable: {e}",
                entry.index, entry.asqn
            )
        })?;
        if first {
            first = false;
            let reaches_back = if snapshot_position < 0 {
                entry.index == 1
            } else {
                entry.asqn as i64 <= snapshot_position + 1
            };
            if !reaches_back {
                return Err(format!(
                    "the log starts at position {} but the state needs it from position {}: \
                     the log was compacted past the snapshot",
                    entry.asqn,
                    snapshot_position + 1
                ));
            }
        }
        for record in records {
            replayed.next_position = record.position + 1;
            if record.position <= snapshot_position {
                continue;
            }
            if record.is_command() {
                if !record.processed {
                    replayed.unprocessed.push_back(record.clone());
                }
            } else {
                // A result of a command: that command and everything before it is processed.
                while replayed
                    .unprocessed
                    .front()
                    .is_some_and(|c| c.position <= record.source_record_position)
                {
                    replayed.unprocessed.pop_front();
                }
            }
            chunk.push(record);
        }
        if chunk.len() >= REPLAY_CHUNK {
            replayed.records += chunk.len() as u64;
            apply_chunk(engine, store, &mut chunk, &mut progress)?;
        }
    }
    replayed.records += chunk.len() as u64;
    apply_chunk(engine, store, &mut chunk, &mut progress)?;
    if first && snapshot_position >= 0 {
        // An empty log behind a snapshot: positions continue after it.
        replayed.next_position = snapshot_position + 1;
    }
    Ok(replayed)
}

fn apply_chunk(
    engine: &Engine,
    store: &dyn Store,
    chunk: &mut Vec<Record>,
    progress: &mut ReplayProgress,
) -> Result<(), String> {
    let writes = engine
        .replay(store, chunk.iter(), progress)
        .map_err(|e| e.to_string())?;
    store.write(writes).map_err(|e| e.to_string())?;
    chunk.clear();
    Ok(())
}
